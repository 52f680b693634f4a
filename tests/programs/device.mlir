#loc1 = loc("x")
module @jit_device attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32> loc("x")) -> (tensor<8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @cyxla_test_device(%arg0) {mhlo.backend_config = {}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<8xf32>) -> tensor<8xf32> loc(#loc2)
    return %0 : tensor<8xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(device)/ffi_call")
#loc3 = loc("jit(device)")
