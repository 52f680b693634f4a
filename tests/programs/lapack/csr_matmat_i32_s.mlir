#loc1 = loc("data")
#loc2 = loc("indices")
#loc3 = loc("indptr")
#loc4 = loc("x")
module @jit__lambda attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<9xf32> loc("data"), %arg1: tensor<9xi32> loc("indices"), %arg2: tensor<6xi32> loc("indptr"), %arg3: tensor<4x3xf32> loc("x")) -> (tensor<5x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @cpu_csr_sparse_dense_ffi(%arg0, %arg2, %arg1, %arg3) {mhlo.backend_config = {}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<9xf32>, tensor<6xi32>, tensor<9xi32>, tensor<4x3xf32>) -> tensor<5x3xf32> loc(#loc5)
    return %0 : tensor<5x3xf32> loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc5 = loc("jit(<lambda>)/bcsr_dot_general")
#loc6 = loc("jit(<lambda>)")
