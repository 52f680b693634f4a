#loc1 = loc("args[0]")
module @jit_rms_norm_8x1024 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x1024xf32> loc("args[0]")) -> (tensor<8x1024xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @rms_norm(%arg0) {mhlo.backend_config = {eps = 9.99999974E-6 : f32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<8x1024xf32>) -> tensor<8x1024xf32> loc(#loc2)
    return %0 : tensor<8x1024xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(rms_norm_8x1024)/ffi_call")
#loc3 = loc("jit(rms_norm_8x1024)")
