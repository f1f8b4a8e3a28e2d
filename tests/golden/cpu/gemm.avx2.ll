; ModuleID = 'tilejit.gemm'
source_filename = "tilejit.gemm"

@block_shape = private constant [2 x i64] [i64 64, i64 64]
@block_shape.1 = private constant [2 x i64] [i64 128, i64 64]

; Function Attrs: nounwind
define void @tj_kernel(ptr %0, i64 %1, i64 %2) #0 {
entry:
  %3 = alloca float, i64 8192, align 64
  %block_firsts = alloca [4 x i64], align 8
  %4 = alloca float, i64 4096, align 64
  %5 = alloca float, i64 4096, align 64
  %6 = alloca float, i64 8192, align 64
  %7 = alloca float, i64 8192, align 64
  %8 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 0
  %tensors = load ptr, ptr %8, align 8
  %9 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 0
  %10 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %9, i32 0, i32 0
  %data = load ptr, ptr %10, align 8
  %11 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %9, i32 0, i32 1, i32 0
  %12 = load i64, ptr %11, align 4
  %13 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %9, i32 0, i32 2, i32 0
  %14 = load i64, ptr %13, align 4
  %15 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %9, i32 0, i32 1, i32 1
  %16 = load i64, ptr %15, align 4
  %17 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %9, i32 0, i32 2, i32 1
  %18 = load i64, ptr %17, align 4
  %19 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 1
  %20 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 0
  %data1 = load ptr, ptr %20, align 8
  %21 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 1, i32 0
  %22 = load i64, ptr %21, align 4
  %23 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 2, i32 0
  %24 = load i64, ptr %23, align 4
  %25 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 1, i32 1
  %26 = load i64, ptr %25, align 4
  %27 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %19, i32 0, i32 2, i32 1
  %28 = load i64, ptr %27, align 4
  %29 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 2
  %30 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %29, i32 0, i32 0
  %data2 = load ptr, ptr %30, align 8
  %31 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %29, i32 0, i32 1, i32 0
  %32 = load i64, ptr %31, align 4
  %33 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %29, i32 0, i32 2, i32 0
  %34 = load i64, ptr %33, align 4
  %35 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %29, i32 0, i32 1, i32 1
  %36 = load i64, ptr %35, align 4
  %37 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %29, i32 0, i32 2, i32 1
  %38 = load i64, ptr %37, align 4
  %39 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 0
  %40 = load i64, ptr %39, align 4
  %41 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 1
  %42 = load i64, ptr %41, align 4
  %program_id = alloca [3 x i64], align 8
  br label %loop

loop:                                             ; preds = %join28, %entry
  %i = phi i64 [ %1, %entry ], [ %159, %join28 ]
  %43 = icmp slt i64 %i, %2
  br i1 %43, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %44 = srem i64 %i, %42
  %45 = sdiv i64 %i, %42
  %46 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %45, ptr %46, align 4
  %47 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 %44, ptr %47, align 4
  %48 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %48, align 4
  %49 = add i64 %16, 63
  br i1 false, label %then, label %join

loop.exit:                                        ; preds = %loop
  ret void

then:                                             ; preds = %loop.body
  %50 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 4
  %51 = load ptr, ptr %50, align 8
  %52 = icmp ne ptr %51, null
  br i1 %52, label %then3, label %join4

join:                                             ; preds = %join4, %loop.body
  %53 = sdiv i64 %49, 64
  %54 = sub i64 0, %49
  %55 = select i1 false, i64 0, i64 %54
  %56 = select i1 false, i64 %55, i64 %53
  %57 = mul i64 %44, 64
  %58 = mul i64 %45, 128
  %59 = icmp eq i64 %38, 1
  %60 = add i64 %58, 128
  %61 = icmp sle i64 %60, %32
  %62 = icmp sge i64 %58, 0
  %63 = and i1 %62, %61
  %64 = and i1 %59, %63
  %65 = add i64 %57, 64
  %66 = icmp sle i64 %65, %36
  %67 = icmp sge i64 %57, 0
  %68 = and i1 %67, %66
  %69 = and i1 %64, %68
  %70 = mul i64 %58, %34
  %71 = add i64 0, %70
  %72 = mul i64 %57, %38
  %73 = add i64 %71, %72
  %74 = getelementptr float, ptr %data2, i64 %73
  %75 = select i1 %69, ptr %74, ptr %6
  %76 = select i1 %69, i64 %34, i64 64
  br label %loop5

then3:                                            ; preds = %then
  %77 = getelementptr inbounds { i32, i64, i32, i64, i64 }, ptr %51, i32 0, i32 0
  %78 = atomicrmw or ptr %77, i32 1 monotonic, align 4
  br label %join4

join4:                                            ; preds = %then3, %then
  br label %join

loop5:                                            ; preds = %join20, %join
  %i8 = phi i64 [ 0, %join ], [ %147, %join20 ]
  %79 = icmp slt i64 %i8, %56
  br i1 %79, label %loop.body6, label %loop.exit7

loop.body6:                                       ; preds = %loop5
  %80 = icmp eq i64 %i8, 0
  %81 = add i64 %i8, 1
  %82 = icmp eq i64 %81, %56
  %83 = mul i64 %i8, 64
  %84 = icmp eq i64 %28, 1
  %85 = add i64 %83, 64
  %86 = icmp sle i64 %85, %22
  %87 = icmp sge i64 %83, 0
  %88 = and i1 %87, %86
  %89 = and i1 %84, %88
  %90 = add i64 %57, 64
  %91 = icmp sle i64 %90, %26
  %92 = icmp sge i64 %57, 0
  %93 = and i1 %92, %91
  %94 = and i1 %89, %93
  %95 = xor i1 %94, true
  br i1 %95, label %then9, label %join10

loop.exit7:                                       ; preds = %loop5
  %96 = icmp sge i64 0, %56
  br i1 %96, label %then21, label %join22

then9:                                            ; preds = %loop.body6
  %97 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %83, ptr %97, align 4
  %98 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %57, ptr %98, align 4
  %99 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %100 = load ptr, ptr %99, align 8
  call void %100(ptr %19, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, i64 0, ptr %4)
  br label %join10

join10:                                           ; preds = %then9, %loop.body6
  %101 = mul i64 %83, %24
  %102 = add i64 0, %101
  %103 = mul i64 %57, %28
  %104 = add i64 %102, %103
  %105 = getelementptr float, ptr %data1, i64 %104
  %106 = select i1 %94, ptr %105, ptr %4
  %107 = select i1 %94, i64 %24, i64 64
  br label %loop11

loop11:                                           ; preds = %loop.exit17, %join10
  %i14 = phi i64 [ 0, %join10 ], [ %133, %loop.exit17 ]
  %108 = icmp slt i64 %i14, 64
  br i1 %108, label %loop.body12, label %loop.exit13

loop.body12:                                      ; preds = %loop11
  br label %loop15

loop.exit13:                                      ; preds = %loop11
  %109 = icmp eq i64 %18, 1
  %110 = add i64 %58, 128
  %111 = icmp sle i64 %110, %12
  %112 = icmp sge i64 %58, 0
  %113 = and i1 %112, %111
  %114 = and i1 %109, %113
  %115 = add i64 %83, 64
  %116 = icmp sle i64 %115, %16
  %117 = icmp sge i64 %83, 0
  %118 = and i1 %117, %116
  %119 = and i1 %114, %118
  %120 = xor i1 %119, true
  br i1 %120, label %then19, label %join20

loop15:                                           ; preds = %loop.body16, %loop.body12
  %i18 = phi i64 [ 0, %loop.body12 ], [ %132, %loop.body16 ]
  %121 = icmp slt i64 %i18, 64
  br i1 %121, label %loop.body16, label %loop.exit17

loop.body16:                                      ; preds = %loop15
  %122 = mul i64 %i14, %107
  %123 = add i64 0, %122
  %124 = mul i64 %i18, 1
  %125 = add i64 %123, %124
  %126 = getelementptr inbounds float, ptr %106, i64 %125
  %127 = load float, ptr %126, align 4
  %128 = add i64 0, %i14
  %129 = mul i64 %128, 64
  %130 = add i64 %129, %i18
  %131 = getelementptr inbounds float, ptr %5, i64 %130
  store float %127, ptr %131, align 4
  %132 = add nuw nsw i64 %i18, 1
  br label %loop15, !llvm.loop !0

loop.exit17:                                      ; preds = %loop15
  %133 = add nuw nsw i64 %i14, 1
  br label %loop11

then19:                                           ; preds = %loop.exit13
  %134 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %58, ptr %134, align 4
  %135 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %83, ptr %135, align 4
  %136 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %137 = load ptr, ptr %136, align 8
  call void %137(ptr %9, i32 2, i32 4, ptr %block_firsts, ptr @block_shape.1, i64 0, ptr %3)
  br label %join20

join20:                                           ; preds = %then19, %loop.exit13
  %138 = mul i64 %58, %14
  %139 = add i64 0, %138
  %140 = mul i64 %83, %18
  %141 = add i64 %139, %140
  %142 = getelementptr float, ptr %data, i64 %141
  %143 = select i1 %119, ptr %142, ptr %3
  %144 = select i1 %119, i64 %14, i64 64
  %145 = select i1 %82, ptr %75, ptr %7
  %146 = select i1 %82, i64 %76, i64 64
  call void @tj_dot_0(ptr %143, i64 %144, ptr %5, ptr %7, ptr %145, i64 %146, i1 %80)
  %147 = add nuw nsw i64 %i8, 1
  br label %loop5

then21:                                           ; preds = %loop.exit7
  br label %loop23

join22:                                           ; preds = %loop.exit25, %loop.exit7
  %148 = xor i1 %69, true
  br i1 %148, label %then27, label %join28

loop23:                                           ; preds = %loop.body24, %then21
  %i26 = phi i64 [ 0, %then21 ], [ %154, %loop.body24 ]
  %149 = icmp slt i64 %i26, 128
  br i1 %149, label %loop.body24, label %loop.exit25

loop.body24:                                      ; preds = %loop23
  %150 = mul i64 %i26, %76
  %151 = add i64 0, %150
  %152 = add i64 %151, 0
  %153 = getelementptr inbounds float, ptr %75, i64 %152
  call void @llvm.memset.p0.i64(ptr align 4 %153, i8 0, i64 256, i1 false)
  %154 = add nuw nsw i64 %i26, 1
  br label %loop23

loop.exit25:                                      ; preds = %loop23
  br label %join22

then27:                                           ; preds = %join22
  %155 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %58, ptr %155, align 4
  %156 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %57, ptr %156, align 4
  %157 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %158 = load ptr, ptr %157, align 8
  call void %158(ptr %29, i32 2, i32 4, ptr %block_firsts, ptr @block_shape.1, ptr %6)
  br label %join28

join28:                                           ; preds = %then27, %join22
  %159 = add nuw nsw i64 %i, 1
  br label %loop
}

; Function Attrs: noinline nounwind
define internal void @tj_dot_0(ptr %0, i64 %1, ptr noalias %2, ptr %3, ptr %4, i64 %5, i1 %6) #1 {
entry:
  %7 = alloca <8 x float>, align 32
  %8 = alloca <8 x float>, align 32
  %9 = alloca <8 x float>, align 32
  %10 = alloca <8 x float>, align 32
  %11 = alloca <8 x float>, align 32
  %12 = alloca <8 x float>, align 32
  %13 = alloca <8 x float>, align 32
  %14 = alloca <8 x float>, align 32
  %15 = alloca <8 x float>, align 32
  %16 = alloca <8 x float>, align 32
  %17 = alloca <8 x float>, align 32
  %18 = alloca <8 x float>, align 32
  br label %loop

loop:                                             ; preds = %loop.exit3, %entry
  %i = phi i64 [ 0, %entry ], [ %23, %loop.exit3 ]
  %19 = icmp slt i64 %i, 21
  br i1 %19, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %20 = mul i64 %i, 6
  br label %loop1

loop.exit:                                        ; preds = %loop
  br label %loop19

loop1:                                            ; preds = %loop.exit7, %loop.body
  %i4 = phi i64 [ 0, %loop.body ], [ %296, %loop.exit7 ]
  %21 = icmp slt i64 %i4, 4
  br i1 %21, label %loop.body2, label %loop.exit3

loop.body2:                                       ; preds = %loop1
  %22 = mul i64 %i4, 16
  br i1 %6, label %then, label %else

loop.exit3:                                       ; preds = %loop1
  %23 = add nuw nsw i64 %i, 1
  br label %loop

then:                                             ; preds = %loop.body2
  %24 = add i64 %22, 0
  %25 = add i64 %20, 0
  store <8 x float> zeroinitializer, ptr %7, align 32
  %26 = add i64 %22, 8
  %27 = add i64 %20, 0
  store <8 x float> zeroinitializer, ptr %8, align 32
  %28 = add i64 %22, 0
  %29 = add i64 %20, 1
  store <8 x float> zeroinitializer, ptr %9, align 32
  %30 = add i64 %22, 8
  %31 = add i64 %20, 1
  store <8 x float> zeroinitializer, ptr %10, align 32
  %32 = add i64 %22, 0
  %33 = add i64 %20, 2
  store <8 x float> zeroinitializer, ptr %11, align 32
  %34 = add i64 %22, 8
  %35 = add i64 %20, 2
  store <8 x float> zeroinitializer, ptr %12, align 32
  %36 = add i64 %22, 0
  %37 = add i64 %20, 3
  store <8 x float> zeroinitializer, ptr %13, align 32
  %38 = add i64 %22, 8
  %39 = add i64 %20, 3
  store <8 x float> zeroinitializer, ptr %14, align 32
  %40 = add i64 %22, 0
  %41 = add i64 %20, 4
  store <8 x float> zeroinitializer, ptr %15, align 32
  %42 = add i64 %22, 8
  %43 = add i64 %20, 4
  store <8 x float> zeroinitializer, ptr %16, align 32
  %44 = add i64 %22, 0
  %45 = add i64 %20, 5
  store <8 x float> zeroinitializer, ptr %17, align 32
  %46 = add i64 %22, 8
  %47 = add i64 %20, 5
  store <8 x float> zeroinitializer, ptr %18, align 32
  br label %join

else:                                             ; preds = %loop.body2
  %48 = add i64 %22, 0
  %49 = add i64 %20, 0
  %50 = add i64 0, %49
  %51 = mul i64 %50, 64
  %52 = add i64 %51, %48
  %53 = getelementptr inbounds float, ptr %3, i64 %52
  %54 = load <8 x float>, ptr %53, align 4
  store <8 x float> %54, ptr %7, align 32
  %55 = add i64 %22, 8
  %56 = add i64 %20, 0
  %57 = add i64 0, %56
  %58 = mul i64 %57, 64
  %59 = add i64 %58, %55
  %60 = getelementptr inbounds float, ptr %3, i64 %59
  %61 = load <8 x float>, ptr %60, align 4
  store <8 x float> %61, ptr %8, align 32
  %62 = add i64 %22, 0
  %63 = add i64 %20, 1
  %64 = add i64 0, %63
  %65 = mul i64 %64, 64
  %66 = add i64 %65, %62
  %67 = getelementptr inbounds float, ptr %3, i64 %66
  %68 = load <8 x float>, ptr %67, align 4
  store <8 x float> %68, ptr %9, align 32
  %69 = add i64 %22, 8
  %70 = add i64 %20, 1
  %71 = add i64 0, %70
  %72 = mul i64 %71, 64
  %73 = add i64 %72, %69
  %74 = getelementptr inbounds float, ptr %3, i64 %73
  %75 = load <8 x float>, ptr %74, align 4
  store <8 x float> %75, ptr %10, align 32
  %76 = add i64 %22, 0
  %77 = add i64 %20, 2
  %78 = add i64 0, %77
  %79 = mul i64 %78, 64
  %80 = add i64 %79, %76
  %81 = getelementptr inbounds float, ptr %3, i64 %80
  %82 = load <8 x float>, ptr %81, align 4
  store <8 x float> %82, ptr %11, align 32
  %83 = add i64 %22, 8
  %84 = add i64 %20, 2
  %85 = add i64 0, %84
  %86 = mul i64 %85, 64
  %87 = add i64 %86, %83
  %88 = getelementptr inbounds float, ptr %3, i64 %87
  %89 = load <8 x float>, ptr %88, align 4
  store <8 x float> %89, ptr %12, align 32
  %90 = add i64 %22, 0
  %91 = add i64 %20, 3
  %92 = add i64 0, %91
  %93 = mul i64 %92, 64
  %94 = add i64 %93, %90
  %95 = getelementptr inbounds float, ptr %3, i64 %94
  %96 = load <8 x float>, ptr %95, align 4
  store <8 x float> %96, ptr %13, align 32
  %97 = add i64 %22, 8
  %98 = add i64 %20, 3
  %99 = add i64 0, %98
  %100 = mul i64 %99, 64
  %101 = add i64 %100, %97
  %102 = getelementptr inbounds float, ptr %3, i64 %101
  %103 = load <8 x float>, ptr %102, align 4
  store <8 x float> %103, ptr %14, align 32
  %104 = add i64 %22, 0
  %105 = add i64 %20, 4
  %106 = add i64 0, %105
  %107 = mul i64 %106, 64
  %108 = add i64 %107, %104
  %109 = getelementptr inbounds float, ptr %3, i64 %108
  %110 = load <8 x float>, ptr %109, align 4
  store <8 x float> %110, ptr %15, align 32
  %111 = add i64 %22, 8
  %112 = add i64 %20, 4
  %113 = add i64 0, %112
  %114 = mul i64 %113, 64
  %115 = add i64 %114, %111
  %116 = getelementptr inbounds float, ptr %3, i64 %115
  %117 = load <8 x float>, ptr %116, align 4
  store <8 x float> %117, ptr %16, align 32
  %118 = add i64 %22, 0
  %119 = add i64 %20, 5
  %120 = add i64 0, %119
  %121 = mul i64 %120, 64
  %122 = add i64 %121, %118
  %123 = getelementptr inbounds float, ptr %3, i64 %122
  %124 = load <8 x float>, ptr %123, align 4
  store <8 x float> %124, ptr %17, align 32
  %125 = add i64 %22, 8
  %126 = add i64 %20, 5
  %127 = add i64 0, %126
  %128 = mul i64 %127, 64
  %129 = add i64 %128, %125
  %130 = getelementptr inbounds float, ptr %3, i64 %129
  %131 = load <8 x float>, ptr %130, align 4
  store <8 x float> %131, ptr %18, align 32
  br label %join

join:                                             ; preds = %else, %then
  br label %loop5

loop5:                                            ; preds = %loop.body6, %join
  %i8 = phi i64 [ 0, %join ], [ %199, %loop.body6 ]
  %132 = icmp slt i64 %i8, 64
  br i1 %132, label %loop.body6, label %loop.exit7

loop.body6:                                       ; preds = %loop5
  %133 = add i64 %22, 0
  %134 = add i64 0, %i8
  %135 = mul i64 %134, 64
  %136 = add i64 %135, %133
  %137 = getelementptr inbounds float, ptr %2, i64 %136
  %138 = load <8 x float>, ptr %137, align 4
  %139 = add i64 %22, 8
  %140 = add i64 0, %i8
  %141 = mul i64 %140, 64
  %142 = add i64 %141, %139
  %143 = getelementptr inbounds float, ptr %2, i64 %142
  %144 = load <8 x float>, ptr %143, align 4
  %145 = add i64 %20, 0
  %146 = mul i64 %145, %1
  %147 = add i64 %146, %i8
  %148 = getelementptr inbounds float, ptr %0, i64 %147
  %149 = load float, ptr %148, align 4
  %.splatinsert = insertelement <8 x float> poison, float %149, i64 0
  %.splat = shufflevector <8 x float> %.splatinsert, <8 x float> poison, <8 x i32> zeroinitializer
  %150 = load <8 x float>, ptr %7, align 32
  %151 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat, <8 x float> %138, <8 x float> %150)
  store <8 x float> %151, ptr %7, align 32
  %152 = load <8 x float>, ptr %8, align 32
  %153 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat, <8 x float> %144, <8 x float> %152)
  store <8 x float> %153, ptr %8, align 32
  %154 = add i64 %20, 1
  %155 = mul i64 %154, %1
  %156 = add i64 %155, %i8
  %157 = getelementptr inbounds float, ptr %0, i64 %156
  %158 = load float, ptr %157, align 4
  %.splatinsert9 = insertelement <8 x float> poison, float %158, i64 0
  %.splat10 = shufflevector <8 x float> %.splatinsert9, <8 x float> poison, <8 x i32> zeroinitializer
  %159 = load <8 x float>, ptr %9, align 32
  %160 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat10, <8 x float> %138, <8 x float> %159)
  store <8 x float> %160, ptr %9, align 32
  %161 = load <8 x float>, ptr %10, align 32
  %162 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat10, <8 x float> %144, <8 x float> %161)
  store <8 x float> %162, ptr %10, align 32
  %163 = add i64 %20, 2
  %164 = mul i64 %163, %1
  %165 = add i64 %164, %i8
  %166 = getelementptr inbounds float, ptr %0, i64 %165
  %167 = load float, ptr %166, align 4
  %.splatinsert11 = insertelement <8 x float> poison, float %167, i64 0
  %.splat12 = shufflevector <8 x float> %.splatinsert11, <8 x float> poison, <8 x i32> zeroinitializer
  %168 = load <8 x float>, ptr %11, align 32
  %169 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat12, <8 x float> %138, <8 x float> %168)
  store <8 x float> %169, ptr %11, align 32
  %170 = load <8 x float>, ptr %12, align 32
  %171 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat12, <8 x float> %144, <8 x float> %170)
  store <8 x float> %171, ptr %12, align 32
  %172 = add i64 %20, 3
  %173 = mul i64 %172, %1
  %174 = add i64 %173, %i8
  %175 = getelementptr inbounds float, ptr %0, i64 %174
  %176 = load float, ptr %175, align 4
  %.splatinsert13 = insertelement <8 x float> poison, float %176, i64 0
  %.splat14 = shufflevector <8 x float> %.splatinsert13, <8 x float> poison, <8 x i32> zeroinitializer
  %177 = load <8 x float>, ptr %13, align 32
  %178 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat14, <8 x float> %138, <8 x float> %177)
  store <8 x float> %178, ptr %13, align 32
  %179 = load <8 x float>, ptr %14, align 32
  %180 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat14, <8 x float> %144, <8 x float> %179)
  store <8 x float> %180, ptr %14, align 32
  %181 = add i64 %20, 4
  %182 = mul i64 %181, %1
  %183 = add i64 %182, %i8
  %184 = getelementptr inbounds float, ptr %0, i64 %183
  %185 = load float, ptr %184, align 4
  %.splatinsert15 = insertelement <8 x float> poison, float %185, i64 0
  %.splat16 = shufflevector <8 x float> %.splatinsert15, <8 x float> poison, <8 x i32> zeroinitializer
  %186 = load <8 x float>, ptr %15, align 32
  %187 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat16, <8 x float> %138, <8 x float> %186)
  store <8 x float> %187, ptr %15, align 32
  %188 = load <8 x float>, ptr %16, align 32
  %189 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat16, <8 x float> %144, <8 x float> %188)
  store <8 x float> %189, ptr %16, align 32
  %190 = add i64 %20, 5
  %191 = mul i64 %190, %1
  %192 = add i64 %191, %i8
  %193 = getelementptr inbounds float, ptr %0, i64 %192
  %194 = load float, ptr %193, align 4
  %.splatinsert17 = insertelement <8 x float> poison, float %194, i64 0
  %.splat18 = shufflevector <8 x float> %.splatinsert17, <8 x float> poison, <8 x i32> zeroinitializer
  %195 = load <8 x float>, ptr %17, align 32
  %196 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat18, <8 x float> %138, <8 x float> %195)
  store <8 x float> %196, ptr %17, align 32
  %197 = load <8 x float>, ptr %18, align 32
  %198 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat18, <8 x float> %144, <8 x float> %197)
  store <8 x float> %198, ptr %18, align 32
  %199 = add nuw nsw i64 %i8, 1
  br label %loop5, !llvm.loop !2

loop.exit7:                                       ; preds = %loop5
  %200 = add i64 %22, 0
  %201 = add i64 %20, 0
  %202 = mul i64 %201, %5
  %203 = add i64 0, %202
  %204 = mul i64 %200, 1
  %205 = add i64 %203, %204
  %206 = getelementptr inbounds float, ptr %4, i64 %205
  %207 = load <8 x float>, ptr %7, align 32
  store <8 x float> %207, ptr %206, align 4
  %208 = add i64 %22, 8
  %209 = add i64 %20, 0
  %210 = mul i64 %209, %5
  %211 = add i64 0, %210
  %212 = mul i64 %208, 1
  %213 = add i64 %211, %212
  %214 = getelementptr inbounds float, ptr %4, i64 %213
  %215 = load <8 x float>, ptr %8, align 32
  store <8 x float> %215, ptr %214, align 4
  %216 = add i64 %22, 0
  %217 = add i64 %20, 1
  %218 = mul i64 %217, %5
  %219 = add i64 0, %218
  %220 = mul i64 %216, 1
  %221 = add i64 %219, %220
  %222 = getelementptr inbounds float, ptr %4, i64 %221
  %223 = load <8 x float>, ptr %9, align 32
  store <8 x float> %223, ptr %222, align 4
  %224 = add i64 %22, 8
  %225 = add i64 %20, 1
  %226 = mul i64 %225, %5
  %227 = add i64 0, %226
  %228 = mul i64 %224, 1
  %229 = add i64 %227, %228
  %230 = getelementptr inbounds float, ptr %4, i64 %229
  %231 = load <8 x float>, ptr %10, align 32
  store <8 x float> %231, ptr %230, align 4
  %232 = add i64 %22, 0
  %233 = add i64 %20, 2
  %234 = mul i64 %233, %5
  %235 = add i64 0, %234
  %236 = mul i64 %232, 1
  %237 = add i64 %235, %236
  %238 = getelementptr inbounds float, ptr %4, i64 %237
  %239 = load <8 x float>, ptr %11, align 32
  store <8 x float> %239, ptr %238, align 4
  %240 = add i64 %22, 8
  %241 = add i64 %20, 2
  %242 = mul i64 %241, %5
  %243 = add i64 0, %242
  %244 = mul i64 %240, 1
  %245 = add i64 %243, %244
  %246 = getelementptr inbounds float, ptr %4, i64 %245
  %247 = load <8 x float>, ptr %12, align 32
  store <8 x float> %247, ptr %246, align 4
  %248 = add i64 %22, 0
  %249 = add i64 %20, 3
  %250 = mul i64 %249, %5
  %251 = add i64 0, %250
  %252 = mul i64 %248, 1
  %253 = add i64 %251, %252
  %254 = getelementptr inbounds float, ptr %4, i64 %253
  %255 = load <8 x float>, ptr %13, align 32
  store <8 x float> %255, ptr %254, align 4
  %256 = add i64 %22, 8
  %257 = add i64 %20, 3
  %258 = mul i64 %257, %5
  %259 = add i64 0, %258
  %260 = mul i64 %256, 1
  %261 = add i64 %259, %260
  %262 = getelementptr inbounds float, ptr %4, i64 %261
  %263 = load <8 x float>, ptr %14, align 32
  store <8 x float> %263, ptr %262, align 4
  %264 = add i64 %22, 0
  %265 = add i64 %20, 4
  %266 = mul i64 %265, %5
  %267 = add i64 0, %266
  %268 = mul i64 %264, 1
  %269 = add i64 %267, %268
  %270 = getelementptr inbounds float, ptr %4, i64 %269
  %271 = load <8 x float>, ptr %15, align 32
  store <8 x float> %271, ptr %270, align 4
  %272 = add i64 %22, 8
  %273 = add i64 %20, 4
  %274 = mul i64 %273, %5
  %275 = add i64 0, %274
  %276 = mul i64 %272, 1
  %277 = add i64 %275, %276
  %278 = getelementptr inbounds float, ptr %4, i64 %277
  %279 = load <8 x float>, ptr %16, align 32
  store <8 x float> %279, ptr %278, align 4
  %280 = add i64 %22, 0
  %281 = add i64 %20, 5
  %282 = mul i64 %281, %5
  %283 = add i64 0, %282
  %284 = mul i64 %280, 1
  %285 = add i64 %283, %284
  %286 = getelementptr inbounds float, ptr %4, i64 %285
  %287 = load <8 x float>, ptr %17, align 32
  store <8 x float> %287, ptr %286, align 4
  %288 = add i64 %22, 8
  %289 = add i64 %20, 5
  %290 = mul i64 %289, %5
  %291 = add i64 0, %290
  %292 = mul i64 %288, 1
  %293 = add i64 %291, %292
  %294 = getelementptr inbounds float, ptr %4, i64 %293
  %295 = load <8 x float>, ptr %18, align 32
  store <8 x float> %295, ptr %294, align 4
  %296 = add nuw nsw i64 %i4, 1
  br label %loop1

loop19:                                           ; preds = %loop.exit28, %loop.exit
  %i22 = phi i64 [ 0, %loop.exit ], [ %377, %loop.exit28 ]
  %297 = icmp slt i64 %i22, 4
  br i1 %297, label %loop.body20, label %loop.exit21

loop.body20:                                      ; preds = %loop19
  %298 = mul i64 %i22, 16
  br i1 %6, label %then23, label %else24

loop.exit21:                                      ; preds = %loop19
  ret void

then23:                                           ; preds = %loop.body20
  %299 = add i64 %298, 0
  store <8 x float> zeroinitializer, ptr %7, align 32
  %300 = add i64 %298, 8
  store <8 x float> zeroinitializer, ptr %8, align 32
  %301 = add i64 %298, 0
  store <8 x float> zeroinitializer, ptr %9, align 32
  %302 = add i64 %298, 8
  store <8 x float> zeroinitializer, ptr %10, align 32
  br label %join25

else24:                                           ; preds = %loop.body20
  %303 = add i64 %298, 0
  %304 = add i64 8064, %303
  %305 = getelementptr inbounds float, ptr %3, i64 %304
  %306 = load <8 x float>, ptr %305, align 4
  store <8 x float> %306, ptr %7, align 32
  %307 = add i64 %298, 8
  %308 = add i64 8064, %307
  %309 = getelementptr inbounds float, ptr %3, i64 %308
  %310 = load <8 x float>, ptr %309, align 4
  store <8 x float> %310, ptr %8, align 32
  %311 = add i64 %298, 0
  %312 = add i64 8128, %311
  %313 = getelementptr inbounds float, ptr %3, i64 %312
  %314 = load <8 x float>, ptr %313, align 4
  store <8 x float> %314, ptr %9, align 32
  %315 = add i64 %298, 8
  %316 = add i64 8128, %315
  %317 = getelementptr inbounds float, ptr %3, i64 %316
  %318 = load <8 x float>, ptr %317, align 4
  store <8 x float> %318, ptr %10, align 32
  br label %join25

join25:                                           ; preds = %else24, %then23
  br label %loop26

loop26:                                           ; preds = %loop.body27, %join25
  %i29 = phi i64 [ 0, %join25 ], [ %348, %loop.body27 ]
  %319 = icmp slt i64 %i29, 64
  br i1 %319, label %loop.body27, label %loop.exit28

loop.body27:                                      ; preds = %loop26
  %320 = add i64 %298, 0
  %321 = add i64 0, %i29
  %322 = mul i64 %321, 64
  %323 = add i64 %322, %320
  %324 = getelementptr inbounds float, ptr %2, i64 %323
  %325 = load <8 x float>, ptr %324, align 4
  %326 = add i64 %298, 8
  %327 = add i64 0, %i29
  %328 = mul i64 %327, 64
  %329 = add i64 %328, %326
  %330 = getelementptr inbounds float, ptr %2, i64 %329
  %331 = load <8 x float>, ptr %330, align 4
  %332 = mul i64 126, %1
  %333 = add i64 %332, %i29
  %334 = getelementptr inbounds float, ptr %0, i64 %333
  %335 = load float, ptr %334, align 4
  %.splatinsert30 = insertelement <8 x float> poison, float %335, i64 0
  %.splat31 = shufflevector <8 x float> %.splatinsert30, <8 x float> poison, <8 x i32> zeroinitializer
  %336 = load <8 x float>, ptr %7, align 32
  %337 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat31, <8 x float> %325, <8 x float> %336)
  store <8 x float> %337, ptr %7, align 32
  %338 = load <8 x float>, ptr %8, align 32
  %339 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat31, <8 x float> %331, <8 x float> %338)
  store <8 x float> %339, ptr %8, align 32
  %340 = mul i64 127, %1
  %341 = add i64 %340, %i29
  %342 = getelementptr inbounds float, ptr %0, i64 %341
  %343 = load float, ptr %342, align 4
  %.splatinsert32 = insertelement <8 x float> poison, float %343, i64 0
  %.splat33 = shufflevector <8 x float> %.splatinsert32, <8 x float> poison, <8 x i32> zeroinitializer
  %344 = load <8 x float>, ptr %9, align 32
  %345 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat33, <8 x float> %325, <8 x float> %344)
  store <8 x float> %345, ptr %9, align 32
  %346 = load <8 x float>, ptr %10, align 32
  %347 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat33, <8 x float> %331, <8 x float> %346)
  store <8 x float> %347, ptr %10, align 32
  %348 = add nuw nsw i64 %i29, 1
  br label %loop26, !llvm.loop !4

loop.exit28:                                      ; preds = %loop26
  %349 = add i64 %298, 0
  %350 = mul i64 126, %5
  %351 = add i64 0, %350
  %352 = mul i64 %349, 1
  %353 = add i64 %351, %352
  %354 = getelementptr inbounds float, ptr %4, i64 %353
  %355 = load <8 x float>, ptr %7, align 32
  store <8 x float> %355, ptr %354, align 4
  %356 = add i64 %298, 8
  %357 = mul i64 126, %5
  %358 = add i64 0, %357
  %359 = mul i64 %356, 1
  %360 = add i64 %358, %359
  %361 = getelementptr inbounds float, ptr %4, i64 %360
  %362 = load <8 x float>, ptr %8, align 32
  store <8 x float> %362, ptr %361, align 4
  %363 = add i64 %298, 0
  %364 = mul i64 127, %5
  %365 = add i64 0, %364
  %366 = mul i64 %363, 1
  %367 = add i64 %365, %366
  %368 = getelementptr inbounds float, ptr %4, i64 %367
  %369 = load <8 x float>, ptr %9, align 32
  store <8 x float> %369, ptr %368, align 4
  %370 = add i64 %298, 8
  %371 = mul i64 127, %5
  %372 = add i64 0, %371
  %373 = mul i64 %370, 1
  %374 = add i64 %372, %373
  %375 = getelementptr inbounds float, ptr %4, i64 %374
  %376 = load <8 x float>, ptr %10, align 32
  store <8 x float> %376, ptr %375, align 4
  %377 = add nuw nsw i64 %i22, 1
  br label %loop19
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare <8 x float> @llvm.fmuladd.v8f32(<8 x float>, <8 x float>, <8 x float>) #2

; Function Attrs: nocallback nofree nounwind willreturn memory(argmem: write)
declare void @llvm.memset.p0.i64(ptr nocapture writeonly, i8, i64, i1 immarg) #3

attributes #0 = { nounwind "min-legal-vector-width"="256" "prefer-vector-width"="256" }
attributes #1 = { noinline nounwind "min-legal-vector-width"="256" "prefer-vector-width"="256" }
attributes #2 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #3 = { nocallback nofree nounwind willreturn memory(argmem: write) }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.interleave.count", i32 4}
!2 = distinct !{!2, !3}
!3 = !{!"llvm.loop.unroll.count", i32 2}
!4 = distinct !{!4, !3}
