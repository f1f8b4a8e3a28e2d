// A stand-in for a library that hands its tensors out through DLPack (PyTorch, NumPy): it
// owns the memory, describes a view of it and counts how often a consumer ran its deleter.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "dsl/dlpack.hpp"

namespace tj::test {

class DLPackProducer {
 public:
  // A view of `data` (which the producer does not free: the test owns it).
  DLPackProducer(void* data, DLDataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides,
                 uint64_t byteOffset = 0, DLDevice device = {kDLCPU, 0})
      : shape_(std::move(shape)), strides_(std::move(strides)) {
    tensor_ = {data, device, int32_t(shape_.size()), dtype, shape_.data(), strides_.empty() ? nullptr : strides_.data(),
               byteOffset};
  }
  // The managed tensor a consumer takes over; its deleter counts, and frees nothing but itself.
  DLManagedTensorVersioned* versioned(uint64_t flags = 0, DLPackVersion version = {1, 1}) {
    auto* m = new DLManagedTensorVersioned{version, this, &deleteVersioned, flags, tensor_};
    return m;
  }
  DLManagedTensor* legacy() { return new DLManagedTensor{tensor_, this, &deleteLegacy}; }
  DLTensor& tensor() { return tensor_; }
  int deleted() const { return deleted_; }

 private:
  static void deleteVersioned(DLManagedTensorVersioned* m) {
    ++static_cast<DLPackProducer*>(m->manager_ctx)->deleted_;
    delete m;
  }
  static void deleteLegacy(DLManagedTensor* m) {
    ++static_cast<DLPackProducer*>(m->manager_ctx)->deleted_;
    delete m;
  }

  std::vector<int64_t> shape_, strides_;
  DLTensor tensor_{};
  int deleted_ = 0;
};

}  // namespace tj::test
