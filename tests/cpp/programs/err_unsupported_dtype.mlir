#loc1 = loc("args[0]")
module @jit_err_unsupported_dtype attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf16> loc("args[0]")) -> (tensor<4xf16> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @scale_any_cpp(%arg0) {mhlo.backend_config = {factor = 2.000000e+00 : f64}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<4xf16>) -> tensor<4xf16> loc(#loc2)
    return %0 : tensor<4xf16> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(err_unsupported_dtype)/ffi_call")
#loc3 = loc("jit(err_unsupported_dtype)")
