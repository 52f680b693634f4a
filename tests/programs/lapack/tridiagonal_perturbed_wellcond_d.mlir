#loc1 = loc("dl")
#loc2 = loc("d")
#loc3 = loc("du")
#loc4 = loc("b")
module @jit__lambda attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf64> loc("dl"), %arg1: tensor<4xf64> loc("d"), %arg2: tensor<4xf64> loc("du"), %arg3: tensor<4x1xf64> loc("b")) -> (tensor<4x1xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(%arg0, %arg1, %arg2, %arg3) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i], [j], [k], [l, m])->([n, o]) {i=4, j=4, k=4, l=4, m=1, n=4, o=1}, custom>} : (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4x1xf64>) -> tensor<4x1xf64> loc(#loc5)
    return %0 : tensor<4x1xf64> loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc5 = loc("jit(<lambda>)/tridiagonal_solve")
#loc6 = loc("jit(<lambda>)")
