#loc = loc(unknown)
#loc1 = loc("a")
#loc2 = loc("b")
module @jit__lambda attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x4xcomplex<f64>> loc("a"), %arg1: tensor<2x4x3xcomplex<f64>> loc("b")) -> (tensor<2x4x3xcomplex<f64>> {jax.result_info = "result"}) {
    %0 = call @_solve_triangular(%arg0, %arg1) : (tensor<2x4x4xcomplex<f64>>, tensor<2x4x3xcomplex<f64>>) -> tensor<2x4x3xcomplex<f64>> loc(#loc3)
    return %0 : tensor<2x4x3xcomplex<f64>> loc(#loc4)
  } loc(#loc)
  func.func private @_solve_triangular(%arg0: tensor<2x4x4xcomplex<f64>> loc(unknown), %arg1: tensor<2x4x3xcomplex<f64>> loc(unknown)) -> tensor<2x4x3xcomplex<f64>> {
    %0 = stablehlo.custom_call @lapack_ztrsm_ffi(%arg0, %arg1) {mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}, mhlo.frontend_attributes = {num_batch_dims = "1"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k], [i, l, m])->([i, n, o]) {i=2, j=4, k=4, l=4, m=3, n=4, o=3}, custom>} : (tensor<2x4x4xcomplex<f64>>, tensor<2x4x3xcomplex<f64>>) -> tensor<2x4x3xcomplex<f64>> loc(#loc6)
    return %0 : tensor<2x4x3xcomplex<f64>> loc(#loc)
  } loc(#loc7)
} loc(#loc)
#loc3 = loc("jit(<lambda>)/jit(_solve_triangular)")
#loc4 = loc("jit(<lambda>)")
#loc5 = loc("jit(<lambda>)/jit")
#loc6 = loc("vmap()/triangular_solve")
#loc7 = loc("jit:"(#loc5))
