#loc1 = loc("args[0]")
#loc2 = loc("args[1]")
#loc3 = loc("args[2]")
#loc4 = loc("args[3]")
module @jit_tridiag_solve_f64_2x3x6x2 attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x6xf64> loc("args[0]"), %arg1: tensor<2x3x6xf64> loc("args[1]"), %arg2: tensor<2x3x6xf64> loc("args[2]"), %arg3: tensor<2x3x6x2xf64> loc("args[3]")) -> (tensor<2x3x6x2xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @tridiag_solve(%arg0, %arg1, %arg2, %arg3) {mhlo.backend_config = {}, operand_layouts = [dense<[2, 1, 0]> : tensor<3xindex>, dense<[2, 1, 0]> : tensor<3xindex>, dense<[2, 1, 0]> : tensor<3xindex>, dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x3x6xf64>, tensor<2x3x6xf64>, tensor<2x3x6xf64>, tensor<2x3x6x2xf64>) -> tensor<2x3x6x2xf64> loc(#loc5)
    return %0 : tensor<2x3x6x2xf64> loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc5 = loc("jit(tridiag_solve_f64_2x3x6x2)/ffi_call")
#loc6 = loc("jit(tridiag_solve_f64_2x3x6x2)")
