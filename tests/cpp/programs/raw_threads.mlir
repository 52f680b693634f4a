module @jit_raw_threads attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<i64> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @raw_threads_c() {mhlo.backend_config = {}, operand_layouts = [], result_layouts = [dense<> : tensor<0xindex>]} : () -> tensor<i64> loc(#loc1)
    return %0 : tensor<i64> loc(#loc2)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("jit(raw_threads)/ffi_call")
#loc2 = loc("jit(raw_threads)")
