#loc1 = loc("data")
#loc2 = loc("indices")
#loc3 = loc("indptr")
#loc4 = loc("x")
module @jit__lambda attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf64> loc("data"), %arg1: tensor<8xi64> loc("indices"), %arg2: tensor<6xi64> loc("indptr"), %arg3: tensor<4xf64> loc("x")) -> (tensor<5xf64> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @cpu_csr_sparse_dense_ffi(%arg0, %arg2, %arg1, %arg3) {mhlo.backend_config = {}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<8xf64>, tensor<6xi64>, tensor<8xi64>, tensor<4xf64>) -> tensor<5xf64> loc(#loc5)
    return %0 : tensor<5xf64> loc(#loc6)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc5 = loc("jit(<lambda>)/bcsr_dot_general")
#loc6 = loc("jit(<lambda>)")
