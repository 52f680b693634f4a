#loc = loc(unknown)
#loc1 = loc("a")
#loc2 = loc("b")
module @jit__lambda attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf64> loc("a"), %arg1: tensor<4x2xf64> loc("b")) -> (tensor<4x2xf64> {jax.result_info = "result"}) {
    %0 = call @_solve_triangular(%arg0, %arg1) : (tensor<4x4xf64>, tensor<4x2xf64>) -> tensor<4x2xf64> loc(#loc3)
    return %0 : tensor<4x2xf64> loc(#loc4)
  } loc(#loc)
  func.func private @_solve_triangular(%arg0: tensor<4x4xf64> loc(unknown), %arg1: tensor<4x2xf64> loc(unknown)) -> tensor<4x2xf64> {
    %0 = stablehlo.custom_call @lapack_dtrsm_ffi(%arg0, %arg1) {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "0"}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [k, l])->([m, n]) {i=4, j=4, k=4, l=2, m=4, n=2}, custom>} : (tensor<4x4xf64>, tensor<4x2xf64>) -> tensor<4x2xf64> loc(#loc6)
    return %0 : tensor<4x2xf64> loc(#loc)
  } loc(#loc7)
} loc(#loc)
#loc3 = loc("jit(<lambda>)/jit(_solve_triangular)")
#loc4 = loc("jit(<lambda>)")
#loc5 = loc("jit(<lambda>)/jit")
#loc6 = loc("triangular_solve")
#loc7 = loc("jit:"(#loc5))
