#loc1 = loc("args[0]")
#loc2 = loc("args[1]")
#loc3 = loc("args[2]")
#loc4 = loc("args[3]")
module @jit_tridiag_solve_f32_4x5 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32> loc("args[0]"), %arg1: tensor<4x5xf32> loc("args[1]"), %arg2: tensor<4x5xf32> loc("args[2]"), %arg3: tensor<4x5xf32> loc("args[3]")) -> (tensor<4x5xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @tridiag_solve(%arg0, %arg1, %arg2, %arg3) {mhlo.backend_config = {}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32> loc(#loc5)
    return %0 : tensor<4x5xf32> loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc5 = loc("jit(tridiag_solve_f32_4x5)/ffi_call")
#loc6 = loc("jit(tridiag_solve_f32_4x5)")
