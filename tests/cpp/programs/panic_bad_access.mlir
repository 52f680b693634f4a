module @jit_panic_bad_access attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<i32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @bad_access_cpp() {mhlo.backend_config = {}, operand_layouts = [], result_layouts = [dense<> : tensor<0xindex>]} : () -> tensor<i32> loc(#loc1)
    return %0 : tensor<i32> loc(#loc2)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("jit(panic_bad_access)/ffi_call")
#loc2 = loc("jit(panic_bad_access)")
