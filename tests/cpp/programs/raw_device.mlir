module @jit_raw_device attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<2xi32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @raw_device_c() {mhlo.backend_config = {}, operand_layouts = [], result_layouts = [dense<0> : tensor<1xindex>]} : () -> tensor<2xi32> loc(#loc1)
    return %0 : tensor<2xi32> loc(#loc2)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("jit(raw_device)/ffi_call")
#loc2 = loc("jit(raw_device)")
