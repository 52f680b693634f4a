// The XLA FFI collectives extension's C++ wrappers (XLA FFI 0.5) for cyxla
// guests: present so that a source including xla/ffi/api/collectives_api.h
// gets a clear message instead of a missing header, and refused on use.
// A sandboxed guest runs on one device of one process with no communicator:
// XLA's collectives (cliques, NCCL-style communicators, memory windows) do
// not reach it, and its context never holds the extension. Shard with
// `jax.shard_map` and call the kernel per shard instead: XLA runs the
// collectives between the calls.
//
// C++17.
#ifndef XLA_FFI_API_COLLECTIVES_API_H_
#define XLA_FFI_API_COLLECTIVES_API_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/collectives_c_api.h"

namespace xla::ffi {

/// @brief Mirrors XLA_FFI_CollectiveGroupMode.
enum class GroupMode {
  kCrossReplica = XLA_FFI_GROUP_CROSS_REPLICA,                         ///< Replicas.
  kCrossPartition = XLA_FFI_GROUP_CROSS_PARTITION,                     ///< Partitions.
  kCrossReplicaAndPartition = XLA_FFI_GROUP_CROSS_REPLICA_AND_PARTITION,  ///< Both.
  kFlattenedId = XLA_FFI_GROUP_FLATTENED_ID,                           ///< Flattened.
};

namespace internal {

/// @brief Not supported in the cyxla sandbox (see the top of this file).
template <typename ErrorPolicy>
class CommunicatorContextBase {
  static_assert(!std::is_same_v<ErrorPolicy, ErrorPolicy>,
                "XLA FFI collectives (xla/ffi/api/collectives_api.h) are not supported in "
                "the cyxla sandbox: a guest runs on one device with no communicator; shard "
                "with jax.shard_map and let XLA run the collectives between calls");
};

/// @brief Not supported in the cyxla sandbox (see the top of this file).
template <typename CommunicatorContextT>
struct CollectivesExtensionBase {
  static_assert(!std::is_same_v<CommunicatorContextT, CommunicatorContextT>,
                "XLA FFI collectives (xla/ffi/api/collectives_api.h) are not supported in "
                "the cyxla sandbox: a guest runs on one device with no communicator; shard "
                "with jax.shard_map and let XLA run the collectives between calls");
};

}  // namespace internal

}  // namespace xla::ffi

#endif  // XLA_FFI_API_COLLECTIVES_API_H_
