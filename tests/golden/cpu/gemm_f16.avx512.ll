; ModuleID = 'tilejit.gemm'
source_filename = "tilejit.gemm"

@block_shape = private constant [2 x i64] [i64 64, i64 64]
@block_shape.1 = private constant [2 x i64] [i64 128, i64 64]

; Function Attrs: nounwind
define void @tj_kernel(ptr %0, i64 %1, i64 %2) #0 {
entry:
  %3 = alloca float, i64 4096, align 64
  %4 = alloca float, i64 8192, align 64
  %5 = alloca half, i64 8192, align 64
  %6 = alloca half, i64 8192, align 64
  %block_firsts = alloca [4 x i64], align 8
  %7 = alloca half, i64 4096, align 64
  %8 = alloca half, i64 4096, align 64
  %9 = alloca float, i64 8192, align 64
  %10 = alloca float, i64 8192, align 64
  %11 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 0
  %tensors = load ptr, ptr %11, align 8
  %12 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 0
  %13 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %12, i32 0, i32 0
  %data = load ptr, ptr %13, align 8
  %14 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %12, i32 0, i32 1, i32 0
  %15 = load i64, ptr %14, align 4
  %16 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %12, i32 0, i32 2, i32 0
  %17 = load i64, ptr %16, align 4
  %18 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %12, i32 0, i32 1, i32 1
  %19 = load i64, ptr %18, align 4
  %20 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %12, i32 0, i32 2, i32 1
  %21 = load i64, ptr %20, align 4
  %22 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 1
  %23 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %22, i32 0, i32 0
  %data1 = load ptr, ptr %23, align 8
  %24 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %22, i32 0, i32 1, i32 0
  %25 = load i64, ptr %24, align 4
  %26 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %22, i32 0, i32 2, i32 0
  %27 = load i64, ptr %26, align 4
  %28 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %22, i32 0, i32 1, i32 1
  %29 = load i64, ptr %28, align 4
  %30 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %22, i32 0, i32 2, i32 1
  %31 = load i64, ptr %30, align 4
  %32 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 2
  %33 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %32, i32 0, i32 0
  %data2 = load ptr, ptr %33, align 8
  %34 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %32, i32 0, i32 1, i32 0
  %35 = load i64, ptr %34, align 4
  %36 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %32, i32 0, i32 2, i32 0
  %37 = load i64, ptr %36, align 4
  %38 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %32, i32 0, i32 1, i32 1
  %39 = load i64, ptr %38, align 4
  %40 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %32, i32 0, i32 2, i32 1
  %41 = load i64, ptr %40, align 4
  %42 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 0
  %43 = load i64, ptr %42, align 4
  %44 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 1
  %45 = load i64, ptr %44, align 4
  %program_id = alloca [3 x i64], align 8
  br label %loop

loop:                                             ; preds = %join52, %entry
  %i = phi i64 [ %1, %entry ], [ %206, %join52 ]
  %46 = icmp slt i64 %i, %2
  br i1 %46, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %47 = srem i64 %i, %45
  %48 = sdiv i64 %i, %45
  %49 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %48, ptr %49, align 4
  %50 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 %47, ptr %50, align 4
  %51 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %51, align 4
  %52 = add i64 %19, 63
  br i1 false, label %then, label %join

loop.exit:                                        ; preds = %loop
  ret void

then:                                             ; preds = %loop.body
  %53 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 4
  %54 = load ptr, ptr %53, align 8
  %55 = icmp ne ptr %54, null
  br i1 %55, label %then3, label %join4

join:                                             ; preds = %join4, %loop.body
  %56 = sdiv i64 %52, 64
  %57 = sub i64 0, %52
  %58 = select i1 false, i64 0, i64 %57
  %59 = select i1 false, i64 %58, i64 %56
  %60 = mul i64 %47, 64
  %61 = mul i64 %48, 128
  %62 = icmp eq i64 %41, 1
  %63 = add i64 %61, 128
  %64 = icmp sle i64 %63, %35
  %65 = icmp sge i64 %61, 0
  %66 = and i1 %65, %64
  %67 = and i1 %62, %66
  %68 = add i64 %60, 64
  %69 = icmp sle i64 %68, %39
  %70 = icmp sge i64 %60, 0
  %71 = and i1 %70, %69
  %72 = and i1 %67, %71
  %73 = mul i64 %61, %37
  %74 = add i64 0, %73
  %75 = mul i64 %60, %41
  %76 = add i64 %74, %75
  %77 = getelementptr float, ptr %data2, i64 %76
  %78 = select i1 %72, ptr %77, ptr %9
  %79 = select i1 %72, i64 %37, i64 64
  br label %loop5

then3:                                            ; preds = %then
  %80 = getelementptr inbounds { i32, i64, i32, i64, i64 }, ptr %54, i32 0, i32 0
  %81 = atomicrmw or ptr %80, i32 1 monotonic, align 4
  br label %join4

join4:                                            ; preds = %then3, %then
  br label %join

loop5:                                            ; preds = %loop.exit43, %join
  %i8 = phi i64 [ 0, %join ], [ %194, %loop.exit43 ]
  %82 = icmp slt i64 %i8, %59
  br i1 %82, label %loop.body6, label %loop.exit7

loop.body6:                                       ; preds = %loop5
  %83 = icmp eq i64 %i8, 0
  %84 = add i64 %i8, 1
  %85 = icmp eq i64 %84, %59
  %86 = mul i64 %i8, 64
  %87 = icmp eq i64 %31, 1
  %88 = add i64 %86, 64
  %89 = icmp sle i64 %88, %25
  %90 = icmp sge i64 %86, 0
  %91 = and i1 %90, %89
  %92 = and i1 %87, %91
  %93 = add i64 %60, 64
  %94 = icmp sle i64 %93, %29
  %95 = icmp sge i64 %60, 0
  %96 = and i1 %95, %94
  %97 = and i1 %92, %96
  %98 = xor i1 %97, true
  br i1 %98, label %then9, label %join10

loop.exit7:                                       ; preds = %loop5
  %99 = icmp sge i64 0, %59
  br i1 %99, label %then45, label %join46

then9:                                            ; preds = %loop.body6
  %100 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %86, ptr %100, align 4
  %101 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %60, ptr %101, align 4
  %102 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %103 = load ptr, ptr %102, align 8
  call void %103(ptr %22, i32 2, i32 2, ptr %block_firsts, ptr @block_shape, i64 0, ptr %7)
  br label %join10

join10:                                           ; preds = %then9, %loop.body6
  %104 = mul i64 %86, %27
  %105 = add i64 0, %104
  %106 = mul i64 %60, %31
  %107 = add i64 %105, %106
  %108 = getelementptr half, ptr %data1, i64 %107
  %109 = select i1 %97, ptr %108, ptr %7
  %110 = select i1 %97, i64 %27, i64 64
  br label %loop11

loop11:                                           ; preds = %loop.exit17, %join10
  %i14 = phi i64 [ 0, %join10 ], [ %138, %loop.exit17 ]
  %111 = icmp slt i64 %i14, 64
  br i1 %111, label %loop.body12, label %loop.exit13

loop.body12:                                      ; preds = %loop11
  br label %loop15

loop.exit13:                                      ; preds = %loop11
  %112 = icmp eq i64 %21, 1
  %113 = add i64 %61, 128
  %114 = icmp sle i64 %113, %15
  %115 = icmp sge i64 %61, 0
  %116 = and i1 %115, %114
  %117 = and i1 %112, %116
  %118 = add i64 %86, 64
  %119 = icmp sle i64 %118, %19
  %120 = icmp sge i64 %86, 0
  %121 = and i1 %120, %119
  %122 = and i1 %117, %121
  %123 = xor i1 %122, true
  br i1 %123, label %then19, label %join20

loop15:                                           ; preds = %loop.body16, %loop.body12
  %i18 = phi i64 [ 0, %loop.body12 ], [ %137, %loop.body16 ]
  %124 = icmp slt i64 %i18, 64
  br i1 %124, label %loop.body16, label %loop.exit17

loop.body16:                                      ; preds = %loop15
  %125 = mul i64 %i14, %110
  %126 = add i64 0, %125
  %127 = mul i64 %i18, 1
  %128 = add i64 %126, %127
  %129 = getelementptr inbounds half, ptr %109, i64 %128
  %130 = load half, ptr %129, align 2
  %131 = fpext half %130 to float
  %132 = add i64 0, %i14
  %133 = mul i64 %132, 64
  %134 = add i64 %133, %i18
  %135 = getelementptr inbounds half, ptr %8, i64 %134
  %136 = fptrunc float %131 to half
  store half %136, ptr %135, align 2
  %137 = add nuw nsw i64 %i18, 1
  br label %loop15, !llvm.loop !0

loop.exit17:                                      ; preds = %loop15
  %138 = add nuw nsw i64 %i14, 1
  br label %loop11

then19:                                           ; preds = %loop.exit13
  %139 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %61, ptr %139, align 4
  %140 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %86, ptr %140, align 4
  %141 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %142 = load ptr, ptr %141, align 8
  call void %142(ptr %12, i32 2, i32 2, ptr %block_firsts, ptr @block_shape.1, i64 0, ptr %5)
  br label %join20

join20:                                           ; preds = %then19, %loop.exit13
  %143 = mul i64 %61, %17
  %144 = add i64 0, %143
  %145 = mul i64 %86, %21
  %146 = add i64 %144, %145
  %147 = getelementptr half, ptr %data, i64 %146
  %148 = select i1 %122, ptr %147, ptr %5
  %149 = select i1 %122, i64 %17, i64 64
  br label %loop21

loop21:                                           ; preds = %loop.exit27, %join20
  %i24 = phi i64 [ 0, %join20 ], [ %167, %loop.exit27 ]
  %150 = icmp slt i64 %i24, 128
  br i1 %150, label %loop.body22, label %loop.exit23

loop.body22:                                      ; preds = %loop21
  br label %loop25

loop.exit23:                                      ; preds = %loop21
  %151 = select i1 %85, ptr %78, ptr %10
  %152 = select i1 %85, i64 %79, i64 64
  br label %loop29

loop25:                                           ; preds = %loop.body26, %loop.body22
  %i28 = phi i64 [ 0, %loop.body22 ], [ %166, %loop.body26 ]
  %153 = icmp slt i64 %i28, 64
  br i1 %153, label %loop.body26, label %loop.exit27

loop.body26:                                      ; preds = %loop25
  %154 = mul i64 %i24, %149
  %155 = add i64 0, %154
  %156 = mul i64 %i28, 1
  %157 = add i64 %155, %156
  %158 = getelementptr inbounds half, ptr %148, i64 %157
  %159 = load half, ptr %158, align 2
  %160 = fpext half %159 to float
  %161 = add i64 0, %i24
  %162 = mul i64 %161, 64
  %163 = add i64 %162, %i28
  %164 = getelementptr inbounds half, ptr %6, i64 %163
  %165 = fptrunc float %160 to half
  store half %165, ptr %164, align 2
  %166 = add nuw nsw i64 %i28, 1
  br label %loop25, !llvm.loop !2

loop.exit27:                                      ; preds = %loop25
  %167 = add nuw nsw i64 %i24, 1
  br label %loop21

loop29:                                           ; preds = %loop.body30, %loop.exit23
  %i32 = phi i64 [ 0, %loop.exit23 ], [ %174, %loop.body30 ]
  %168 = icmp slt i64 %i32, 512
  br i1 %168, label %loop.body30, label %loop.exit31

loop.body30:                                      ; preds = %loop29
  %169 = mul i64 %i32, 16
  %170 = getelementptr inbounds half, ptr %6, i64 %169
  %171 = load <16 x half>, ptr %170, align 2
  %172 = getelementptr inbounds float, ptr %4, i64 %169
  %173 = fpext <16 x half> %171 to <16 x float>
  store <16 x float> %173, ptr %172, align 4
  %174 = add nuw nsw i64 %i32, 1
  br label %loop29

loop.exit31:                                      ; preds = %loop29
  br label %loop33

loop33:                                           ; preds = %loop.body34, %loop.exit31
  %i36 = phi i64 [ 8192, %loop.exit31 ], [ %180, %loop.body34 ]
  %175 = icmp slt i64 %i36, 8192
  br i1 %175, label %loop.body34, label %loop.exit35

loop.body34:                                      ; preds = %loop33
  %176 = getelementptr inbounds half, ptr %6, i64 %i36
  %177 = load half, ptr %176, align 2
  %178 = getelementptr inbounds float, ptr %4, i64 %i36
  %179 = fpext half %177 to float
  store float %179, ptr %178, align 4
  %180 = add nuw nsw i64 %i36, 1
  br label %loop33

loop.exit35:                                      ; preds = %loop33
  br label %loop37

loop37:                                           ; preds = %loop.body38, %loop.exit35
  %i40 = phi i64 [ 0, %loop.exit35 ], [ %187, %loop.body38 ]
  %181 = icmp slt i64 %i40, 256
  br i1 %181, label %loop.body38, label %loop.exit39

loop.body38:                                      ; preds = %loop37
  %182 = mul i64 %i40, 16
  %183 = getelementptr inbounds half, ptr %8, i64 %182
  %184 = load <16 x half>, ptr %183, align 2
  %185 = getelementptr inbounds float, ptr %3, i64 %182
  %186 = fpext <16 x half> %184 to <16 x float>
  store <16 x float> %186, ptr %185, align 4
  %187 = add nuw nsw i64 %i40, 1
  br label %loop37

loop.exit39:                                      ; preds = %loop37
  br label %loop41

loop41:                                           ; preds = %loop.body42, %loop.exit39
  %i44 = phi i64 [ 4096, %loop.exit39 ], [ %193, %loop.body42 ]
  %188 = icmp slt i64 %i44, 4096
  br i1 %188, label %loop.body42, label %loop.exit43

loop.body42:                                      ; preds = %loop41
  %189 = getelementptr inbounds half, ptr %8, i64 %i44
  %190 = load half, ptr %189, align 2
  %191 = getelementptr inbounds float, ptr %3, i64 %i44
  %192 = fpext half %190 to float
  store float %192, ptr %191, align 4
  %193 = add nuw nsw i64 %i44, 1
  br label %loop41

loop.exit43:                                      ; preds = %loop41
  call void @tj_dot_0(ptr %4, i64 64, ptr %3, ptr %10, ptr %151, i64 %152, i1 %83)
  %194 = add nuw nsw i64 %i8, 1
  br label %loop5

then45:                                           ; preds = %loop.exit7
  br label %loop47

join46:                                           ; preds = %loop.exit49, %loop.exit7
  %195 = xor i1 %72, true
  br i1 %195, label %then51, label %join52

loop47:                                           ; preds = %loop.body48, %then45
  %i50 = phi i64 [ 0, %then45 ], [ %201, %loop.body48 ]
  %196 = icmp slt i64 %i50, 128
  br i1 %196, label %loop.body48, label %loop.exit49

loop.body48:                                      ; preds = %loop47
  %197 = mul i64 %i50, %79
  %198 = add i64 0, %197
  %199 = add i64 %198, 0
  %200 = getelementptr inbounds float, ptr %78, i64 %199
  call void @llvm.memset.p0.i64(ptr align 4 %200, i8 0, i64 256, i1 false)
  %201 = add nuw nsw i64 %i50, 1
  br label %loop47

loop.exit49:                                      ; preds = %loop47
  br label %join46

then51:                                           ; preds = %join46
  %202 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %61, ptr %202, align 4
  %203 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 %60, ptr %203, align 4
  %204 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %205 = load ptr, ptr %204, align 8
  call void %205(ptr %32, i32 2, i32 4, ptr %block_firsts, ptr @block_shape.1, ptr %9)
  br label %join52

join52:                                           ; preds = %then51, %join46
  %206 = add nuw nsw i64 %i, 1
  br label %loop
}

; Function Attrs: noinline nounwind
define internal void @tj_dot_0(ptr %0, i64 %1, ptr noalias %2, ptr %3, ptr %4, i64 %5, i1 %6) #1 {
entry:
  %7 = alloca <16 x float>, align 64
  %8 = alloca <16 x float>, align 64
  %9 = alloca <16 x float>, align 64
  %10 = alloca <16 x float>, align 64
  %11 = alloca <16 x float>, align 64
  %12 = alloca <16 x float>, align 64
  %13 = alloca <16 x float>, align 64
  %14 = alloca <16 x float>, align 64
  %15 = alloca <16 x float>, align 64
  %16 = alloca <16 x float>, align 64
  %17 = alloca <16 x float>, align 64
  %18 = alloca <16 x float>, align 64
  %19 = alloca <16 x float>, align 64
  %20 = alloca <16 x float>, align 64
  %21 = alloca <16 x float>, align 64
  %22 = alloca <16 x float>, align 64
  br label %loop

loop:                                             ; preds = %loop.exit3, %entry
  %i = phi i64 [ 0, %entry ], [ %27, %loop.exit3 ]
  %23 = icmp slt i64 %i, 16
  br i1 %23, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %24 = mul i64 %i, 8
  br label %loop1

loop.exit:                                        ; preds = %loop
  ret void

loop1:                                            ; preds = %loop.exit7, %loop.body
  %i4 = phi i64 [ 0, %loop.body ], [ %402, %loop.exit7 ]
  %25 = icmp slt i64 %i4, 2
  br i1 %25, label %loop.body2, label %loop.exit3

loop.body2:                                       ; preds = %loop1
  %26 = mul i64 %i4, 32
  br i1 %6, label %then, label %else

loop.exit3:                                       ; preds = %loop1
  %27 = add nuw nsw i64 %i, 1
  br label %loop

then:                                             ; preds = %loop.body2
  %28 = add i64 %26, 0
  %29 = add i64 %24, 0
  store <16 x float> zeroinitializer, ptr %7, align 64
  %30 = add i64 %26, 16
  %31 = add i64 %24, 0
  store <16 x float> zeroinitializer, ptr %8, align 64
  %32 = add i64 %26, 0
  %33 = add i64 %24, 1
  store <16 x float> zeroinitializer, ptr %9, align 64
  %34 = add i64 %26, 16
  %35 = add i64 %24, 1
  store <16 x float> zeroinitializer, ptr %10, align 64
  %36 = add i64 %26, 0
  %37 = add i64 %24, 2
  store <16 x float> zeroinitializer, ptr %11, align 64
  %38 = add i64 %26, 16
  %39 = add i64 %24, 2
  store <16 x float> zeroinitializer, ptr %12, align 64
  %40 = add i64 %26, 0
  %41 = add i64 %24, 3
  store <16 x float> zeroinitializer, ptr %13, align 64
  %42 = add i64 %26, 16
  %43 = add i64 %24, 3
  store <16 x float> zeroinitializer, ptr %14, align 64
  %44 = add i64 %26, 0
  %45 = add i64 %24, 4
  store <16 x float> zeroinitializer, ptr %15, align 64
  %46 = add i64 %26, 16
  %47 = add i64 %24, 4
  store <16 x float> zeroinitializer, ptr %16, align 64
  %48 = add i64 %26, 0
  %49 = add i64 %24, 5
  store <16 x float> zeroinitializer, ptr %17, align 64
  %50 = add i64 %26, 16
  %51 = add i64 %24, 5
  store <16 x float> zeroinitializer, ptr %18, align 64
  %52 = add i64 %26, 0
  %53 = add i64 %24, 6
  store <16 x float> zeroinitializer, ptr %19, align 64
  %54 = add i64 %26, 16
  %55 = add i64 %24, 6
  store <16 x float> zeroinitializer, ptr %20, align 64
  %56 = add i64 %26, 0
  %57 = add i64 %24, 7
  store <16 x float> zeroinitializer, ptr %21, align 64
  %58 = add i64 %26, 16
  %59 = add i64 %24, 7
  store <16 x float> zeroinitializer, ptr %22, align 64
  br label %join

else:                                             ; preds = %loop.body2
  %60 = add i64 %26, 0
  %61 = add i64 %24, 0
  %62 = add i64 0, %61
  %63 = mul i64 %62, 64
  %64 = add i64 %63, %60
  %65 = getelementptr inbounds float, ptr %3, i64 %64
  %66 = load <16 x float>, ptr %65, align 4
  store <16 x float> %66, ptr %7, align 64
  %67 = add i64 %26, 16
  %68 = add i64 %24, 0
  %69 = add i64 0, %68
  %70 = mul i64 %69, 64
  %71 = add i64 %70, %67
  %72 = getelementptr inbounds float, ptr %3, i64 %71
  %73 = load <16 x float>, ptr %72, align 4
  store <16 x float> %73, ptr %8, align 64
  %74 = add i64 %26, 0
  %75 = add i64 %24, 1
  %76 = add i64 0, %75
  %77 = mul i64 %76, 64
  %78 = add i64 %77, %74
  %79 = getelementptr inbounds float, ptr %3, i64 %78
  %80 = load <16 x float>, ptr %79, align 4
  store <16 x float> %80, ptr %9, align 64
  %81 = add i64 %26, 16
  %82 = add i64 %24, 1
  %83 = add i64 0, %82
  %84 = mul i64 %83, 64
  %85 = add i64 %84, %81
  %86 = getelementptr inbounds float, ptr %3, i64 %85
  %87 = load <16 x float>, ptr %86, align 4
  store <16 x float> %87, ptr %10, align 64
  %88 = add i64 %26, 0
  %89 = add i64 %24, 2
  %90 = add i64 0, %89
  %91 = mul i64 %90, 64
  %92 = add i64 %91, %88
  %93 = getelementptr inbounds float, ptr %3, i64 %92
  %94 = load <16 x float>, ptr %93, align 4
  store <16 x float> %94, ptr %11, align 64
  %95 = add i64 %26, 16
  %96 = add i64 %24, 2
  %97 = add i64 0, %96
  %98 = mul i64 %97, 64
  %99 = add i64 %98, %95
  %100 = getelementptr inbounds float, ptr %3, i64 %99
  %101 = load <16 x float>, ptr %100, align 4
  store <16 x float> %101, ptr %12, align 64
  %102 = add i64 %26, 0
  %103 = add i64 %24, 3
  %104 = add i64 0, %103
  %105 = mul i64 %104, 64
  %106 = add i64 %105, %102
  %107 = getelementptr inbounds float, ptr %3, i64 %106
  %108 = load <16 x float>, ptr %107, align 4
  store <16 x float> %108, ptr %13, align 64
  %109 = add i64 %26, 16
  %110 = add i64 %24, 3
  %111 = add i64 0, %110
  %112 = mul i64 %111, 64
  %113 = add i64 %112, %109
  %114 = getelementptr inbounds float, ptr %3, i64 %113
  %115 = load <16 x float>, ptr %114, align 4
  store <16 x float> %115, ptr %14, align 64
  %116 = add i64 %26, 0
  %117 = add i64 %24, 4
  %118 = add i64 0, %117
  %119 = mul i64 %118, 64
  %120 = add i64 %119, %116
  %121 = getelementptr inbounds float, ptr %3, i64 %120
  %122 = load <16 x float>, ptr %121, align 4
  store <16 x float> %122, ptr %15, align 64
  %123 = add i64 %26, 16
  %124 = add i64 %24, 4
  %125 = add i64 0, %124
  %126 = mul i64 %125, 64
  %127 = add i64 %126, %123
  %128 = getelementptr inbounds float, ptr %3, i64 %127
  %129 = load <16 x float>, ptr %128, align 4
  store <16 x float> %129, ptr %16, align 64
  %130 = add i64 %26, 0
  %131 = add i64 %24, 5
  %132 = add i64 0, %131
  %133 = mul i64 %132, 64
  %134 = add i64 %133, %130
  %135 = getelementptr inbounds float, ptr %3, i64 %134
  %136 = load <16 x float>, ptr %135, align 4
  store <16 x float> %136, ptr %17, align 64
  %137 = add i64 %26, 16
  %138 = add i64 %24, 5
  %139 = add i64 0, %138
  %140 = mul i64 %139, 64
  %141 = add i64 %140, %137
  %142 = getelementptr inbounds float, ptr %3, i64 %141
  %143 = load <16 x float>, ptr %142, align 4
  store <16 x float> %143, ptr %18, align 64
  %144 = add i64 %26, 0
  %145 = add i64 %24, 6
  %146 = add i64 0, %145
  %147 = mul i64 %146, 64
  %148 = add i64 %147, %144
  %149 = getelementptr inbounds float, ptr %3, i64 %148
  %150 = load <16 x float>, ptr %149, align 4
  store <16 x float> %150, ptr %19, align 64
  %151 = add i64 %26, 16
  %152 = add i64 %24, 6
  %153 = add i64 0, %152
  %154 = mul i64 %153, 64
  %155 = add i64 %154, %151
  %156 = getelementptr inbounds float, ptr %3, i64 %155
  %157 = load <16 x float>, ptr %156, align 4
  store <16 x float> %157, ptr %20, align 64
  %158 = add i64 %26, 0
  %159 = add i64 %24, 7
  %160 = add i64 0, %159
  %161 = mul i64 %160, 64
  %162 = add i64 %161, %158
  %163 = getelementptr inbounds float, ptr %3, i64 %162
  %164 = load <16 x float>, ptr %163, align 4
  store <16 x float> %164, ptr %21, align 64
  %165 = add i64 %26, 16
  %166 = add i64 %24, 7
  %167 = add i64 0, %166
  %168 = mul i64 %167, 64
  %169 = add i64 %168, %165
  %170 = getelementptr inbounds float, ptr %3, i64 %169
  %171 = load <16 x float>, ptr %170, align 4
  store <16 x float> %171, ptr %22, align 64
  br label %join

join:                                             ; preds = %else, %then
  %172 = add i64 %24, 0
  %173 = mul i64 %172, %1
  %174 = add i64 %173, 0
  %175 = getelementptr inbounds float, ptr %0, i64 %174
  %176 = call ptr asm "", "=r,0"(ptr %175)
  %177 = add i64 %24, 1
  %178 = mul i64 %177, %1
  %179 = add i64 %178, 0
  %180 = getelementptr inbounds float, ptr %0, i64 %179
  %181 = call ptr asm "", "=r,0"(ptr %180)
  %182 = add i64 %24, 2
  %183 = mul i64 %182, %1
  %184 = add i64 %183, 0
  %185 = getelementptr inbounds float, ptr %0, i64 %184
  %186 = call ptr asm "", "=r,0"(ptr %185)
  %187 = add i64 %24, 3
  %188 = mul i64 %187, %1
  %189 = add i64 %188, 0
  %190 = getelementptr inbounds float, ptr %0, i64 %189
  %191 = call ptr asm "", "=r,0"(ptr %190)
  %192 = add i64 %24, 4
  %193 = mul i64 %192, %1
  %194 = add i64 %193, 0
  %195 = getelementptr inbounds float, ptr %0, i64 %194
  %196 = call ptr asm "", "=r,0"(ptr %195)
  %197 = add i64 %24, 5
  %198 = mul i64 %197, %1
  %199 = add i64 %198, 0
  %200 = getelementptr inbounds float, ptr %0, i64 %199
  %201 = call ptr asm "", "=r,0"(ptr %200)
  %202 = add i64 %24, 6
  %203 = mul i64 %202, %1
  %204 = add i64 %203, 0
  %205 = getelementptr inbounds float, ptr %0, i64 %204
  %206 = call ptr asm "", "=r,0"(ptr %205)
  %207 = add i64 %24, 7
  %208 = mul i64 %207, %1
  %209 = add i64 %208, 0
  %210 = getelementptr inbounds float, ptr %0, i64 %209
  %211 = call ptr asm "", "=r,0"(ptr %210)
  br label %loop5

loop5:                                            ; preds = %loop.body6, %join
  %i8 = phi i64 [ 0, %join ], [ %273, %loop.body6 ]
  %212 = icmp slt i64 %i8, 64
  br i1 %212, label %loop.body6, label %loop.exit7

loop.body6:                                       ; preds = %loop5
  %213 = add i64 %26, 0
  %214 = add i64 0, %i8
  %215 = mul i64 %214, 64
  %216 = add i64 %215, %213
  %217 = getelementptr inbounds float, ptr %2, i64 %216
  %218 = load <16 x float>, ptr %217, align 4
  %219 = add i64 %26, 16
  %220 = add i64 0, %i8
  %221 = mul i64 %220, 64
  %222 = add i64 %221, %219
  %223 = getelementptr inbounds float, ptr %2, i64 %222
  %224 = load <16 x float>, ptr %223, align 4
  %225 = getelementptr inbounds float, ptr %176, i64 %i8
  %226 = load float, ptr %225, align 4
  %.splatinsert = insertelement <16 x float> poison, float %226, i64 0
  %.splat = shufflevector <16 x float> %.splatinsert, <16 x float> poison, <16 x i32> zeroinitializer
  %227 = load <16 x float>, ptr %7, align 64
  %228 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat, <16 x float> %218, <16 x float> %227)
  store <16 x float> %228, ptr %7, align 64
  %229 = load <16 x float>, ptr %8, align 64
  %230 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat, <16 x float> %224, <16 x float> %229)
  store <16 x float> %230, ptr %8, align 64
  %231 = getelementptr inbounds float, ptr %181, i64 %i8
  %232 = load float, ptr %231, align 4
  %.splatinsert9 = insertelement <16 x float> poison, float %232, i64 0
  %.splat10 = shufflevector <16 x float> %.splatinsert9, <16 x float> poison, <16 x i32> zeroinitializer
  %233 = load <16 x float>, ptr %9, align 64
  %234 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat10, <16 x float> %218, <16 x float> %233)
  store <16 x float> %234, ptr %9, align 64
  %235 = load <16 x float>, ptr %10, align 64
  %236 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat10, <16 x float> %224, <16 x float> %235)
  store <16 x float> %236, ptr %10, align 64
  %237 = getelementptr inbounds float, ptr %186, i64 %i8
  %238 = load float, ptr %237, align 4
  %.splatinsert11 = insertelement <16 x float> poison, float %238, i64 0
  %.splat12 = shufflevector <16 x float> %.splatinsert11, <16 x float> poison, <16 x i32> zeroinitializer
  %239 = load <16 x float>, ptr %11, align 64
  %240 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat12, <16 x float> %218, <16 x float> %239)
  store <16 x float> %240, ptr %11, align 64
  %241 = load <16 x float>, ptr %12, align 64
  %242 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat12, <16 x float> %224, <16 x float> %241)
  store <16 x float> %242, ptr %12, align 64
  %243 = getelementptr inbounds float, ptr %191, i64 %i8
  %244 = load float, ptr %243, align 4
  %.splatinsert13 = insertelement <16 x float> poison, float %244, i64 0
  %.splat14 = shufflevector <16 x float> %.splatinsert13, <16 x float> poison, <16 x i32> zeroinitializer
  %245 = load <16 x float>, ptr %13, align 64
  %246 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat14, <16 x float> %218, <16 x float> %245)
  store <16 x float> %246, ptr %13, align 64
  %247 = load <16 x float>, ptr %14, align 64
  %248 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat14, <16 x float> %224, <16 x float> %247)
  store <16 x float> %248, ptr %14, align 64
  %249 = getelementptr inbounds float, ptr %196, i64 %i8
  %250 = load float, ptr %249, align 4
  %.splatinsert15 = insertelement <16 x float> poison, float %250, i64 0
  %.splat16 = shufflevector <16 x float> %.splatinsert15, <16 x float> poison, <16 x i32> zeroinitializer
  %251 = load <16 x float>, ptr %15, align 64
  %252 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat16, <16 x float> %218, <16 x float> %251)
  store <16 x float> %252, ptr %15, align 64
  %253 = load <16 x float>, ptr %16, align 64
  %254 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat16, <16 x float> %224, <16 x float> %253)
  store <16 x float> %254, ptr %16, align 64
  %255 = getelementptr inbounds float, ptr %201, i64 %i8
  %256 = load float, ptr %255, align 4
  %.splatinsert17 = insertelement <16 x float> poison, float %256, i64 0
  %.splat18 = shufflevector <16 x float> %.splatinsert17, <16 x float> poison, <16 x i32> zeroinitializer
  %257 = load <16 x float>, ptr %17, align 64
  %258 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat18, <16 x float> %218, <16 x float> %257)
  store <16 x float> %258, ptr %17, align 64
  %259 = load <16 x float>, ptr %18, align 64
  %260 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat18, <16 x float> %224, <16 x float> %259)
  store <16 x float> %260, ptr %18, align 64
  %261 = getelementptr inbounds float, ptr %206, i64 %i8
  %262 = load float, ptr %261, align 4
  %.splatinsert19 = insertelement <16 x float> poison, float %262, i64 0
  %.splat20 = shufflevector <16 x float> %.splatinsert19, <16 x float> poison, <16 x i32> zeroinitializer
  %263 = load <16 x float>, ptr %19, align 64
  %264 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat20, <16 x float> %218, <16 x float> %263)
  store <16 x float> %264, ptr %19, align 64
  %265 = load <16 x float>, ptr %20, align 64
  %266 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat20, <16 x float> %224, <16 x float> %265)
  store <16 x float> %266, ptr %20, align 64
  %267 = getelementptr inbounds float, ptr %211, i64 %i8
  %268 = load float, ptr %267, align 4
  %.splatinsert21 = insertelement <16 x float> poison, float %268, i64 0
  %.splat22 = shufflevector <16 x float> %.splatinsert21, <16 x float> poison, <16 x i32> zeroinitializer
  %269 = load <16 x float>, ptr %21, align 64
  %270 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat22, <16 x float> %218, <16 x float> %269)
  store <16 x float> %270, ptr %21, align 64
  %271 = load <16 x float>, ptr %22, align 64
  %272 = call <16 x float> @llvm.fmuladd.v16f32(<16 x float> %.splat22, <16 x float> %224, <16 x float> %271)
  store <16 x float> %272, ptr %22, align 64
  %273 = add nuw nsw i64 %i8, 1
  br label %loop5, !llvm.loop !3

loop.exit7:                                       ; preds = %loop5
  %274 = add i64 %26, 0
  %275 = add i64 %24, 0
  %276 = mul i64 %275, %5
  %277 = add i64 0, %276
  %278 = mul i64 %274, 1
  %279 = add i64 %277, %278
  %280 = getelementptr inbounds float, ptr %4, i64 %279
  %281 = load <16 x float>, ptr %7, align 64
  store <16 x float> %281, ptr %280, align 4
  %282 = add i64 %26, 16
  %283 = add i64 %24, 0
  %284 = mul i64 %283, %5
  %285 = add i64 0, %284
  %286 = mul i64 %282, 1
  %287 = add i64 %285, %286
  %288 = getelementptr inbounds float, ptr %4, i64 %287
  %289 = load <16 x float>, ptr %8, align 64
  store <16 x float> %289, ptr %288, align 4
  %290 = add i64 %26, 0
  %291 = add i64 %24, 1
  %292 = mul i64 %291, %5
  %293 = add i64 0, %292
  %294 = mul i64 %290, 1
  %295 = add i64 %293, %294
  %296 = getelementptr inbounds float, ptr %4, i64 %295
  %297 = load <16 x float>, ptr %9, align 64
  store <16 x float> %297, ptr %296, align 4
  %298 = add i64 %26, 16
  %299 = add i64 %24, 1
  %300 = mul i64 %299, %5
  %301 = add i64 0, %300
  %302 = mul i64 %298, 1
  %303 = add i64 %301, %302
  %304 = getelementptr inbounds float, ptr %4, i64 %303
  %305 = load <16 x float>, ptr %10, align 64
  store <16 x float> %305, ptr %304, align 4
  %306 = add i64 %26, 0
  %307 = add i64 %24, 2
  %308 = mul i64 %307, %5
  %309 = add i64 0, %308
  %310 = mul i64 %306, 1
  %311 = add i64 %309, %310
  %312 = getelementptr inbounds float, ptr %4, i64 %311
  %313 = load <16 x float>, ptr %11, align 64
  store <16 x float> %313, ptr %312, align 4
  %314 = add i64 %26, 16
  %315 = add i64 %24, 2
  %316 = mul i64 %315, %5
  %317 = add i64 0, %316
  %318 = mul i64 %314, 1
  %319 = add i64 %317, %318
  %320 = getelementptr inbounds float, ptr %4, i64 %319
  %321 = load <16 x float>, ptr %12, align 64
  store <16 x float> %321, ptr %320, align 4
  %322 = add i64 %26, 0
  %323 = add i64 %24, 3
  %324 = mul i64 %323, %5
  %325 = add i64 0, %324
  %326 = mul i64 %322, 1
  %327 = add i64 %325, %326
  %328 = getelementptr inbounds float, ptr %4, i64 %327
  %329 = load <16 x float>, ptr %13, align 64
  store <16 x float> %329, ptr %328, align 4
  %330 = add i64 %26, 16
  %331 = add i64 %24, 3
  %332 = mul i64 %331, %5
  %333 = add i64 0, %332
  %334 = mul i64 %330, 1
  %335 = add i64 %333, %334
  %336 = getelementptr inbounds float, ptr %4, i64 %335
  %337 = load <16 x float>, ptr %14, align 64
  store <16 x float> %337, ptr %336, align 4
  %338 = add i64 %26, 0
  %339 = add i64 %24, 4
  %340 = mul i64 %339, %5
  %341 = add i64 0, %340
  %342 = mul i64 %338, 1
  %343 = add i64 %341, %342
  %344 = getelementptr inbounds float, ptr %4, i64 %343
  %345 = load <16 x float>, ptr %15, align 64
  store <16 x float> %345, ptr %344, align 4
  %346 = add i64 %26, 16
  %347 = add i64 %24, 4
  %348 = mul i64 %347, %5
  %349 = add i64 0, %348
  %350 = mul i64 %346, 1
  %351 = add i64 %349, %350
  %352 = getelementptr inbounds float, ptr %4, i64 %351
  %353 = load <16 x float>, ptr %16, align 64
  store <16 x float> %353, ptr %352, align 4
  %354 = add i64 %26, 0
  %355 = add i64 %24, 5
  %356 = mul i64 %355, %5
  %357 = add i64 0, %356
  %358 = mul i64 %354, 1
  %359 = add i64 %357, %358
  %360 = getelementptr inbounds float, ptr %4, i64 %359
  %361 = load <16 x float>, ptr %17, align 64
  store <16 x float> %361, ptr %360, align 4
  %362 = add i64 %26, 16
  %363 = add i64 %24, 5
  %364 = mul i64 %363, %5
  %365 = add i64 0, %364
  %366 = mul i64 %362, 1
  %367 = add i64 %365, %366
  %368 = getelementptr inbounds float, ptr %4, i64 %367
  %369 = load <16 x float>, ptr %18, align 64
  store <16 x float> %369, ptr %368, align 4
  %370 = add i64 %26, 0
  %371 = add i64 %24, 6
  %372 = mul i64 %371, %5
  %373 = add i64 0, %372
  %374 = mul i64 %370, 1
  %375 = add i64 %373, %374
  %376 = getelementptr inbounds float, ptr %4, i64 %375
  %377 = load <16 x float>, ptr %19, align 64
  store <16 x float> %377, ptr %376, align 4
  %378 = add i64 %26, 16
  %379 = add i64 %24, 6
  %380 = mul i64 %379, %5
  %381 = add i64 0, %380
  %382 = mul i64 %378, 1
  %383 = add i64 %381, %382
  %384 = getelementptr inbounds float, ptr %4, i64 %383
  %385 = load <16 x float>, ptr %20, align 64
  store <16 x float> %385, ptr %384, align 4
  %386 = add i64 %26, 0
  %387 = add i64 %24, 7
  %388 = mul i64 %387, %5
  %389 = add i64 0, %388
  %390 = mul i64 %386, 1
  %391 = add i64 %389, %390
  %392 = getelementptr inbounds float, ptr %4, i64 %391
  %393 = load <16 x float>, ptr %21, align 64
  store <16 x float> %393, ptr %392, align 4
  %394 = add i64 %26, 16
  %395 = add i64 %24, 7
  %396 = mul i64 %395, %5
  %397 = add i64 0, %396
  %398 = mul i64 %394, 1
  %399 = add i64 %397, %398
  %400 = getelementptr inbounds float, ptr %4, i64 %399
  %401 = load <16 x float>, ptr %22, align 64
  store <16 x float> %401, ptr %400, align 4
  %402 = add nuw nsw i64 %i4, 1
  br label %loop1
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare <16 x float> @llvm.fmuladd.v16f32(<16 x float>, <16 x float>, <16 x float>) #2

; Function Attrs: nocallback nofree nounwind willreturn memory(argmem: write)
declare void @llvm.memset.p0.i64(ptr nocapture writeonly, i8, i64, i1 immarg) #3

attributes #0 = { nounwind "min-legal-vector-width"="512" "prefer-vector-width"="512" }
attributes #1 = { noinline nounwind "min-legal-vector-width"="512" "prefer-vector-width"="512" }
attributes #2 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #3 = { nocallback nofree nounwind willreturn memory(argmem: write) }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.interleave.count", i32 4}
!2 = distinct !{!2, !1}
!3 = distinct !{!3, !4}
!4 = !{!"llvm.loop.unroll.count", i32 2}
