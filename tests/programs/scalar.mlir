#loc1 = loc("x")
module @jit_scalar attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f32> loc("x")) -> (tensor<f32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32> loc(#loc2)
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32> loc(#loc2)
    %0 = stablehlo.multiply %arg0, %cst_0 : tensor<f32> loc(#loc3)
    %1 = stablehlo.add %0, %cst : tensor<f32> loc(#loc4)
    return %1 : tensor<f32> loc(#loc2)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(scalar)")
#loc3 = loc("jit(scalar)/mul")
#loc4 = loc("jit(scalar)/add")
