#loc1 = loc("dl")
#loc2 = loc("d")
#loc3 = loc("du")
#loc4 = loc("b")
module @jit__lambda attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x5xf64> loc("dl"), %arg1: tensor<3x5xf64> loc("d"), %arg2: tensor<3x5xf64> loc("du"), %arg3: tensor<3x5x2xf64> loc("b")) -> (tensor<3x5x2xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(%arg0, %arg1, %arg2, %arg3) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, k], [i, l], [i, m, n])->([i, o, p]) {i=3, j=5, k=5, l=5, m=5, n=2, o=5, p=2}, custom>} : (tensor<3x5xf64>, tensor<3x5xf64>, tensor<3x5xf64>, tensor<3x5x2xf64>) -> tensor<3x5x2xf64> loc(#loc5)
    return %0 : tensor<3x5x2xf64> loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc5 = loc("jit(<lambda>)/tridiagonal_solve")
#loc6 = loc("jit(<lambda>)")
