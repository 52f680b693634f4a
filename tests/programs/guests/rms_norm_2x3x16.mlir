#loc1 = loc("args[0]")
module @jit_rms_norm_2x3x16 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x16xf32> loc("args[0]")) -> (tensor<2x3x16xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @rms_norm(%arg0) {mhlo.backend_config = {eps = 9.99999974E-6 : f32}, operand_layouts = [dense<[2, 1, 0]> : tensor<3xindex>], result_layouts = [dense<[2, 1, 0]> : tensor<3xindex>]} : (tensor<2x3x16xf32>) -> tensor<2x3x16xf32> loc(#loc2)
    return %0 : tensor<2x3x16xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(rms_norm_2x3x16)/ffi_call")
#loc3 = loc("jit(rms_norm_2x3x16)")
