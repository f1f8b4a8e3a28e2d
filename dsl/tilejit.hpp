// tilejit: write a kernel as a C++ lambda over tiles. Include this one header.
#pragma once
#include "dsl/dlpack.hpp"
#include "dsl/kernel.hpp"
#include "dsl/program.hpp"
#include "dsl/run.hpp"
#include "dsl/tensor.hpp"
