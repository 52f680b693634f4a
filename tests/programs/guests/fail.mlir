#loc1 = loc("args[0]")
module @jit_fail attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> loc("args[0]")) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @fail(%arg0) {mhlo.backend_config = {code = 8 : i32, message = "tenant quota exceeded"}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<4xf32>) -> tensor<4xf32> loc(#loc2)
    return %0 : tensor<4xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(fail)/ffi_call")
#loc3 = loc("jit(fail)")
