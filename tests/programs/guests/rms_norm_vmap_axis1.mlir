#loc1 = loc("args[0]")
module @jit_rms_norm_vmap_axis1 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4x8xf32> loc("args[0]")) -> (tensor<3x4x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0, 2] : (tensor<3x4x8xf32>) -> tensor<4x3x8xf32> loc(#loc2)
    %1 = stablehlo.custom_call @rms_norm(%0) {mhlo.backend_config = {eps = 9.99999974E-6 : f32}, operand_layouts = [dense<[2, 1, 0]> : tensor<3xindex>], result_layouts = [dense<[2, 1, 0]> : tensor<3xindex>]} : (tensor<4x3x8xf32>) -> tensor<4x3x8xf32> loc(#loc3)
    %2 = stablehlo.transpose %1, dims = [1, 0, 2] : (tensor<4x3x8xf32>) -> tensor<3x4x8xf32> loc(#loc2)
    return %2 : tensor<3x4x8xf32> loc(#loc4)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(rms_norm_vmap_axis1)/vmap()/transpose")
#loc3 = loc("jit(rms_norm_vmap_axis1)/vmap()/ffi_call")
#loc4 = loc("jit(rms_norm_vmap_axis1)")
