#loc1 = loc("dl")
#loc2 = loc("d")
#loc3 = loc("du")
#loc4 = loc("b")
module @jit__lambda attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x6xf32> loc("dl"), %arg1: tensor<2x6xf32> loc("d"), %arg2: tensor<2x6xf32> loc("du"), %arg3: tensor<2x6x3xf32> loc("b")) -> (tensor<2x6x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(%arg0, %arg1, %arg2, %arg3) {mhlo.backend_config = {}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, k], [i, l], [i, m, n])->([i, o, p]) {i=2, j=6, k=6, l=6, m=6, n=3, o=6, p=3}, custom>} : (tensor<2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>, tensor<2x6x3xf32>) -> tensor<2x6x3xf32> loc(#loc5)
    return %0 : tensor<2x6x3xf32> loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc5 = loc("jit(<lambda>)/tridiagonal_solve")
#loc6 = loc("jit(<lambda>)")
