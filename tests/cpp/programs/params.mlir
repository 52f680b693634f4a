#loc1 = loc("args[0]")
module @jit_params attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<7xf32> loc("args[0]")) -> (tensor<7xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @params_cpp(%arg0) {mhlo.backend_config = {label = "four", offset = -3 : i64, scale = 5.000000e-01 : f32}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<7xf32>) -> tensor<7xf32> loc(#loc2)
    return %0 : tensor<7xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(params)/ffi_call")
#loc3 = loc("jit(params)")
