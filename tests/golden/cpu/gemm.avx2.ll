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
  %i4 = phi i64 [ 0, %loop.body ], [ %308, %loop.exit7 ]
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
  %132 = add i64 %20, 0
  %133 = mul i64 %132, %1
  %134 = add i64 %133, 0
  %135 = getelementptr inbounds float, ptr %0, i64 %134
  %136 = call ptr asm "", "=r,0"(ptr %135)
  %137 = add i64 %20, 1
  %138 = mul i64 %137, %1
  %139 = add i64 %138, 0
  %140 = getelementptr inbounds float, ptr %0, i64 %139
  %141 = call ptr asm "", "=r,0"(ptr %140)
  %142 = add i64 %20, 2
  %143 = mul i64 %142, %1
  %144 = add i64 %143, 0
  %145 = getelementptr inbounds float, ptr %0, i64 %144
  %146 = call ptr asm "", "=r,0"(ptr %145)
  %147 = add i64 %20, 3
  %148 = mul i64 %147, %1
  %149 = add i64 %148, 0
  %150 = getelementptr inbounds float, ptr %0, i64 %149
  %151 = call ptr asm "", "=r,0"(ptr %150)
  %152 = add i64 %20, 4
  %153 = mul i64 %152, %1
  %154 = add i64 %153, 0
  %155 = getelementptr inbounds float, ptr %0, i64 %154
  %156 = call ptr asm "", "=r,0"(ptr %155)
  %157 = add i64 %20, 5
  %158 = mul i64 %157, %1
  %159 = add i64 %158, 0
  %160 = getelementptr inbounds float, ptr %0, i64 %159
  %161 = call ptr asm "", "=r,0"(ptr %160)
  br label %loop5

loop5:                                            ; preds = %loop.body6, %join
  %i8 = phi i64 [ 0, %join ], [ %211, %loop.body6 ]
  %162 = icmp slt i64 %i8, 64
  br i1 %162, label %loop.body6, label %loop.exit7

loop.body6:                                       ; preds = %loop5
  %163 = add i64 %22, 0
  %164 = add i64 0, %i8
  %165 = mul i64 %164, 64
  %166 = add i64 %165, %163
  %167 = getelementptr inbounds float, ptr %2, i64 %166
  %168 = load <8 x float>, ptr %167, align 4
  %169 = add i64 %22, 8
  %170 = add i64 0, %i8
  %171 = mul i64 %170, 64
  %172 = add i64 %171, %169
  %173 = getelementptr inbounds float, ptr %2, i64 %172
  %174 = load <8 x float>, ptr %173, align 4
  %175 = getelementptr inbounds float, ptr %136, i64 %i8
  %176 = load float, ptr %175, align 4
  %.splatinsert = insertelement <8 x float> poison, float %176, i64 0
  %.splat = shufflevector <8 x float> %.splatinsert, <8 x float> poison, <8 x i32> zeroinitializer
  %177 = load <8 x float>, ptr %7, align 32
  %178 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat, <8 x float> %168, <8 x float> %177)
  store <8 x float> %178, ptr %7, align 32
  %179 = load <8 x float>, ptr %8, align 32
  %180 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat, <8 x float> %174, <8 x float> %179)
  store <8 x float> %180, ptr %8, align 32
  %181 = getelementptr inbounds float, ptr %141, i64 %i8
  %182 = load float, ptr %181, align 4
  %.splatinsert9 = insertelement <8 x float> poison, float %182, i64 0
  %.splat10 = shufflevector <8 x float> %.splatinsert9, <8 x float> poison, <8 x i32> zeroinitializer
  %183 = load <8 x float>, ptr %9, align 32
  %184 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat10, <8 x float> %168, <8 x float> %183)
  store <8 x float> %184, ptr %9, align 32
  %185 = load <8 x float>, ptr %10, align 32
  %186 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat10, <8 x float> %174, <8 x float> %185)
  store <8 x float> %186, ptr %10, align 32
  %187 = getelementptr inbounds float, ptr %146, i64 %i8
  %188 = load float, ptr %187, align 4
  %.splatinsert11 = insertelement <8 x float> poison, float %188, i64 0
  %.splat12 = shufflevector <8 x float> %.splatinsert11, <8 x float> poison, <8 x i32> zeroinitializer
  %189 = load <8 x float>, ptr %11, align 32
  %190 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat12, <8 x float> %168, <8 x float> %189)
  store <8 x float> %190, ptr %11, align 32
  %191 = load <8 x float>, ptr %12, align 32
  %192 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat12, <8 x float> %174, <8 x float> %191)
  store <8 x float> %192, ptr %12, align 32
  %193 = getelementptr inbounds float, ptr %151, i64 %i8
  %194 = load float, ptr %193, align 4
  %.splatinsert13 = insertelement <8 x float> poison, float %194, i64 0
  %.splat14 = shufflevector <8 x float> %.splatinsert13, <8 x float> poison, <8 x i32> zeroinitializer
  %195 = load <8 x float>, ptr %13, align 32
  %196 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat14, <8 x float> %168, <8 x float> %195)
  store <8 x float> %196, ptr %13, align 32
  %197 = load <8 x float>, ptr %14, align 32
  %198 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat14, <8 x float> %174, <8 x float> %197)
  store <8 x float> %198, ptr %14, align 32
  %199 = getelementptr inbounds float, ptr %156, i64 %i8
  %200 = load float, ptr %199, align 4
  %.splatinsert15 = insertelement <8 x float> poison, float %200, i64 0
  %.splat16 = shufflevector <8 x float> %.splatinsert15, <8 x float> poison, <8 x i32> zeroinitializer
  %201 = load <8 x float>, ptr %15, align 32
  %202 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat16, <8 x float> %168, <8 x float> %201)
  store <8 x float> %202, ptr %15, align 32
  %203 = load <8 x float>, ptr %16, align 32
  %204 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat16, <8 x float> %174, <8 x float> %203)
  store <8 x float> %204, ptr %16, align 32
  %205 = getelementptr inbounds float, ptr %161, i64 %i8
  %206 = load float, ptr %205, align 4
  %.splatinsert17 = insertelement <8 x float> poison, float %206, i64 0
  %.splat18 = shufflevector <8 x float> %.splatinsert17, <8 x float> poison, <8 x i32> zeroinitializer
  %207 = load <8 x float>, ptr %17, align 32
  %208 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat18, <8 x float> %168, <8 x float> %207)
  store <8 x float> %208, ptr %17, align 32
  %209 = load <8 x float>, ptr %18, align 32
  %210 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat18, <8 x float> %174, <8 x float> %209)
  store <8 x float> %210, ptr %18, align 32
  %211 = add nuw nsw i64 %i8, 1
  br label %loop5, !llvm.loop !2

loop.exit7:                                       ; preds = %loop5
  %212 = add i64 %22, 0
  %213 = add i64 %20, 0
  %214 = mul i64 %213, %5
  %215 = add i64 0, %214
  %216 = mul i64 %212, 1
  %217 = add i64 %215, %216
  %218 = getelementptr inbounds float, ptr %4, i64 %217
  %219 = load <8 x float>, ptr %7, align 32
  store <8 x float> %219, ptr %218, align 4
  %220 = add i64 %22, 8
  %221 = add i64 %20, 0
  %222 = mul i64 %221, %5
  %223 = add i64 0, %222
  %224 = mul i64 %220, 1
  %225 = add i64 %223, %224
  %226 = getelementptr inbounds float, ptr %4, i64 %225
  %227 = load <8 x float>, ptr %8, align 32
  store <8 x float> %227, ptr %226, align 4
  %228 = add i64 %22, 0
  %229 = add i64 %20, 1
  %230 = mul i64 %229, %5
  %231 = add i64 0, %230
  %232 = mul i64 %228, 1
  %233 = add i64 %231, %232
  %234 = getelementptr inbounds float, ptr %4, i64 %233
  %235 = load <8 x float>, ptr %9, align 32
  store <8 x float> %235, ptr %234, align 4
  %236 = add i64 %22, 8
  %237 = add i64 %20, 1
  %238 = mul i64 %237, %5
  %239 = add i64 0, %238
  %240 = mul i64 %236, 1
  %241 = add i64 %239, %240
  %242 = getelementptr inbounds float, ptr %4, i64 %241
  %243 = load <8 x float>, ptr %10, align 32
  store <8 x float> %243, ptr %242, align 4
  %244 = add i64 %22, 0
  %245 = add i64 %20, 2
  %246 = mul i64 %245, %5
  %247 = add i64 0, %246
  %248 = mul i64 %244, 1
  %249 = add i64 %247, %248
  %250 = getelementptr inbounds float, ptr %4, i64 %249
  %251 = load <8 x float>, ptr %11, align 32
  store <8 x float> %251, ptr %250, align 4
  %252 = add i64 %22, 8
  %253 = add i64 %20, 2
  %254 = mul i64 %253, %5
  %255 = add i64 0, %254
  %256 = mul i64 %252, 1
  %257 = add i64 %255, %256
  %258 = getelementptr inbounds float, ptr %4, i64 %257
  %259 = load <8 x float>, ptr %12, align 32
  store <8 x float> %259, ptr %258, align 4
  %260 = add i64 %22, 0
  %261 = add i64 %20, 3
  %262 = mul i64 %261, %5
  %263 = add i64 0, %262
  %264 = mul i64 %260, 1
  %265 = add i64 %263, %264
  %266 = getelementptr inbounds float, ptr %4, i64 %265
  %267 = load <8 x float>, ptr %13, align 32
  store <8 x float> %267, ptr %266, align 4
  %268 = add i64 %22, 8
  %269 = add i64 %20, 3
  %270 = mul i64 %269, %5
  %271 = add i64 0, %270
  %272 = mul i64 %268, 1
  %273 = add i64 %271, %272
  %274 = getelementptr inbounds float, ptr %4, i64 %273
  %275 = load <8 x float>, ptr %14, align 32
  store <8 x float> %275, ptr %274, align 4
  %276 = add i64 %22, 0
  %277 = add i64 %20, 4
  %278 = mul i64 %277, %5
  %279 = add i64 0, %278
  %280 = mul i64 %276, 1
  %281 = add i64 %279, %280
  %282 = getelementptr inbounds float, ptr %4, i64 %281
  %283 = load <8 x float>, ptr %15, align 32
  store <8 x float> %283, ptr %282, align 4
  %284 = add i64 %22, 8
  %285 = add i64 %20, 4
  %286 = mul i64 %285, %5
  %287 = add i64 0, %286
  %288 = mul i64 %284, 1
  %289 = add i64 %287, %288
  %290 = getelementptr inbounds float, ptr %4, i64 %289
  %291 = load <8 x float>, ptr %16, align 32
  store <8 x float> %291, ptr %290, align 4
  %292 = add i64 %22, 0
  %293 = add i64 %20, 5
  %294 = mul i64 %293, %5
  %295 = add i64 0, %294
  %296 = mul i64 %292, 1
  %297 = add i64 %295, %296
  %298 = getelementptr inbounds float, ptr %4, i64 %297
  %299 = load <8 x float>, ptr %17, align 32
  store <8 x float> %299, ptr %298, align 4
  %300 = add i64 %22, 8
  %301 = add i64 %20, 5
  %302 = mul i64 %301, %5
  %303 = add i64 0, %302
  %304 = mul i64 %300, 1
  %305 = add i64 %303, %304
  %306 = getelementptr inbounds float, ptr %4, i64 %305
  %307 = load <8 x float>, ptr %18, align 32
  store <8 x float> %307, ptr %306, align 4
  %308 = add nuw nsw i64 %i4, 1
  br label %loop1

loop19:                                           ; preds = %loop.exit28, %loop.exit
  %i22 = phi i64 [ 0, %loop.exit ], [ %393, %loop.exit28 ]
  %309 = icmp slt i64 %i22, 4
  br i1 %309, label %loop.body20, label %loop.exit21

loop.body20:                                      ; preds = %loop19
  %310 = mul i64 %i22, 16
  br i1 %6, label %then23, label %else24

loop.exit21:                                      ; preds = %loop19
  ret void

then23:                                           ; preds = %loop.body20
  %311 = add i64 %310, 0
  store <8 x float> zeroinitializer, ptr %7, align 32
  %312 = add i64 %310, 8
  store <8 x float> zeroinitializer, ptr %8, align 32
  %313 = add i64 %310, 0
  store <8 x float> zeroinitializer, ptr %9, align 32
  %314 = add i64 %310, 8
  store <8 x float> zeroinitializer, ptr %10, align 32
  br label %join25

else24:                                           ; preds = %loop.body20
  %315 = add i64 %310, 0
  %316 = add i64 8064, %315
  %317 = getelementptr inbounds float, ptr %3, i64 %316
  %318 = load <8 x float>, ptr %317, align 4
  store <8 x float> %318, ptr %7, align 32
  %319 = add i64 %310, 8
  %320 = add i64 8064, %319
  %321 = getelementptr inbounds float, ptr %3, i64 %320
  %322 = load <8 x float>, ptr %321, align 4
  store <8 x float> %322, ptr %8, align 32
  %323 = add i64 %310, 0
  %324 = add i64 8128, %323
  %325 = getelementptr inbounds float, ptr %3, i64 %324
  %326 = load <8 x float>, ptr %325, align 4
  store <8 x float> %326, ptr %9, align 32
  %327 = add i64 %310, 8
  %328 = add i64 8128, %327
  %329 = getelementptr inbounds float, ptr %3, i64 %328
  %330 = load <8 x float>, ptr %329, align 4
  store <8 x float> %330, ptr %10, align 32
  br label %join25

join25:                                           ; preds = %else24, %then23
  %331 = mul i64 126, %1
  %332 = add i64 %331, 0
  %333 = getelementptr inbounds float, ptr %0, i64 %332
  %334 = call ptr asm "", "=r,0"(ptr %333)
  %335 = mul i64 127, %1
  %336 = add i64 %335, 0
  %337 = getelementptr inbounds float, ptr %0, i64 %336
  %338 = call ptr asm "", "=r,0"(ptr %337)
  br label %loop26

loop26:                                           ; preds = %loop.body27, %join25
  %i29 = phi i64 [ 0, %join25 ], [ %364, %loop.body27 ]
  %339 = icmp slt i64 %i29, 64
  br i1 %339, label %loop.body27, label %loop.exit28

loop.body27:                                      ; preds = %loop26
  %340 = add i64 %310, 0
  %341 = add i64 0, %i29
  %342 = mul i64 %341, 64
  %343 = add i64 %342, %340
  %344 = getelementptr inbounds float, ptr %2, i64 %343
  %345 = load <8 x float>, ptr %344, align 4
  %346 = add i64 %310, 8
  %347 = add i64 0, %i29
  %348 = mul i64 %347, 64
  %349 = add i64 %348, %346
  %350 = getelementptr inbounds float, ptr %2, i64 %349
  %351 = load <8 x float>, ptr %350, align 4
  %352 = getelementptr inbounds float, ptr %334, i64 %i29
  %353 = load float, ptr %352, align 4
  %.splatinsert30 = insertelement <8 x float> poison, float %353, i64 0
  %.splat31 = shufflevector <8 x float> %.splatinsert30, <8 x float> poison, <8 x i32> zeroinitializer
  %354 = load <8 x float>, ptr %7, align 32
  %355 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat31, <8 x float> %345, <8 x float> %354)
  store <8 x float> %355, ptr %7, align 32
  %356 = load <8 x float>, ptr %8, align 32
  %357 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat31, <8 x float> %351, <8 x float> %356)
  store <8 x float> %357, ptr %8, align 32
  %358 = getelementptr inbounds float, ptr %338, i64 %i29
  %359 = load float, ptr %358, align 4
  %.splatinsert32 = insertelement <8 x float> poison, float %359, i64 0
  %.splat33 = shufflevector <8 x float> %.splatinsert32, <8 x float> poison, <8 x i32> zeroinitializer
  %360 = load <8 x float>, ptr %9, align 32
  %361 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat33, <8 x float> %345, <8 x float> %360)
  store <8 x float> %361, ptr %9, align 32
  %362 = load <8 x float>, ptr %10, align 32
  %363 = call <8 x float> @llvm.fmuladd.v8f32(<8 x float> %.splat33, <8 x float> %351, <8 x float> %362)
  store <8 x float> %363, ptr %10, align 32
  %364 = add nuw nsw i64 %i29, 1
  br label %loop26, !llvm.loop !4

loop.exit28:                                      ; preds = %loop26
  %365 = add i64 %310, 0
  %366 = mul i64 126, %5
  %367 = add i64 0, %366
  %368 = mul i64 %365, 1
  %369 = add i64 %367, %368
  %370 = getelementptr inbounds float, ptr %4, i64 %369
  %371 = load <8 x float>, ptr %7, align 32
  store <8 x float> %371, ptr %370, align 4
  %372 = add i64 %310, 8
  %373 = mul i64 126, %5
  %374 = add i64 0, %373
  %375 = mul i64 %372, 1
  %376 = add i64 %374, %375
  %377 = getelementptr inbounds float, ptr %4, i64 %376
  %378 = load <8 x float>, ptr %8, align 32
  store <8 x float> %378, ptr %377, align 4
  %379 = add i64 %310, 0
  %380 = mul i64 127, %5
  %381 = add i64 0, %380
  %382 = mul i64 %379, 1
  %383 = add i64 %381, %382
  %384 = getelementptr inbounds float, ptr %4, i64 %383
  %385 = load <8 x float>, ptr %9, align 32
  store <8 x float> %385, ptr %384, align 4
  %386 = add i64 %310, 8
  %387 = mul i64 127, %5
  %388 = add i64 0, %387
  %389 = mul i64 %386, 1
  %390 = add i64 %388, %389
  %391 = getelementptr inbounds float, ptr %4, i64 %390
  %392 = load <8 x float>, ptr %10, align 32
  store <8 x float> %392, ptr %391, align 4
  %393 = add nuw nsw i64 %i22, 1
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
