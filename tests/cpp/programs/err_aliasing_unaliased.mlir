#loc1 = loc("args[0]")
module @jit_err_aliasing_unaliased attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x8xf32> loc("args[0]")) -> (tensor<2x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @aliasing_cpp(%arg0) {mhlo.backend_config = {}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc(#loc2)
    return %0 : tensor<2x8xf32> loc(#loc3)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(err_aliasing_unaliased)/ffi_call")
#loc3 = loc("jit(err_aliasing_unaliased)")
