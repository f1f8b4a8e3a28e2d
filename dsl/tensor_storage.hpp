// The storage behind a Tensor's views (dsl/tensor.hpp): for tensor.cpp and dlpack.cpp only.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <new>

#include "devices/device.hpp"
#include "dsl/tensor.hpp"

namespace tj {

struct Tensor::Storage {
  static constexpr std::align_val_t kAlign{64};
  // Memory another library allocated (a DLPack producer's), kept until the storage goes;
  // declared first, so released last, after the device copy over it.
  std::shared_ptr<void> foreign;
  std::byte* bytes;
  size_t size;
  bool ownsBytes = true;
  bool readOnly = false;  // kernels may not store to it (a DLPack import marked read-only)
  // DLPack exports of the device copy whose deleters have not run: the copy may not go (on()).
  std::atomic<int> deviceExports{0};
  std::unique_ptr<Residency> residency;  // null: only on the host
  // Which elements were written, for the sanitizer: made by Tensor::empty, dropped once host
  // code may have written any element (data()) or every one was written.
  std::shared_ptr<WrittenElements> written;
  explicit Storage(size_t n)
      : bytes(static_cast<std::byte*>(::operator new(std::max<size_t>(n, 1), kAlign))), size(n) {}
  // The `n` host bytes at `borrowed`, which `foreign` is to keep alive.
  Storage(std::byte* borrowed, size_t n) : bytes(borrowed), size(n), ownsBytes(false) {}
  ~Storage() {
    residency.reset();  // before the memory under its copy is released
    if (ownsBytes) ::operator delete(bytes, kAlign);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

}  // namespace tj
