; ModuleID = 'tilejit.softmax'
source_filename = "tilejit.softmax"

@block_shape = private constant [2 x i64] [i64 2, i64 32]

; Function Attrs: nounwind
define void @tj_kernel(ptr %0, i64 %1, i64 %2) #0 {
entry:
  %3 = alloca float, i64 64, align 64
  %4 = alloca float, align 4
  %5 = alloca i64, align 8
  %6 = alloca float, i64 2, align 64
  %7 = alloca float, i64 64, align 64
  %8 = alloca i32, align 4
  %9 = alloca float, align 4
  %10 = alloca i64, align 8
  %11 = alloca float, i64 2, align 64
  %block_firsts = alloca [4 x i64], align 8
  %12 = alloca float, i64 64, align 64
  %13 = alloca float, i64 64, align 64
  %14 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 0
  %tensors = load ptr, ptr %14, align 8
  %15 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 0
  %16 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %15, i32 0, i32 0
  %data = load ptr, ptr %16, align 8
  %17 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %15, i32 0, i32 1, i32 0
  %18 = load i64, ptr %17, align 4
  %19 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %15, i32 0, i32 2, i32 0
  %20 = load i64, ptr %19, align 4
  %21 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %15, i32 0, i32 1, i32 1
  %22 = load i64, ptr %21, align 4
  %23 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %15, i32 0, i32 2, i32 1
  %24 = load i64, ptr %23, align 4
  %25 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %tensors, i64 1
  %26 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %25, i32 0, i32 0
  %data1 = load ptr, ptr %26, align 8
  %27 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %25, i32 0, i32 1, i32 0
  %28 = load i64, ptr %27, align 4
  %29 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %25, i32 0, i32 2, i32 0
  %30 = load i64, ptr %29, align 4
  %31 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %25, i32 0, i32 1, i32 1
  %32 = load i64, ptr %31, align 4
  %33 = getelementptr inbounds { ptr, [4 x i64], [4 x i64] }, ptr %25, i32 0, i32 2, i32 1
  %34 = load i64, ptr %33, align 4
  %35 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 1, i32 0
  %36 = load i64, ptr %35, align 4
  %program_id = alloca [3 x i64], align 8
  br label %loop

loop:                                             ; preds = %join49, %entry
  %i = phi i64 [ %1, %entry ], [ %219, %join49 ]
  %37 = icmp slt i64 %i, %2
  br i1 %37, label %loop.body, label %loop.exit

loop.body:                                        ; preds = %loop
  %38 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 0
  store i64 %i, ptr %38, align 4
  %39 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 1
  store i64 0, ptr %39, align 4
  %40 = getelementptr inbounds [3 x i64], ptr %program_id, i32 0, i32 2
  store i64 0, ptr %40, align 4
  %41 = mul i64 %i, 2
  %42 = icmp eq i64 %24, 1
  %43 = add i64 %41, 2
  %44 = icmp sle i64 %43, %18
  %45 = icmp sge i64 %41, 0
  %46 = and i1 %45, %44
  %47 = and i1 %42, %46
  %48 = icmp sle i64 32, %22
  %49 = and i1 true, %48
  %50 = and i1 %47, %49
  %51 = xor i1 %50, true
  br i1 %51, label %then, label %join

loop.exit:                                        ; preds = %loop
  ret void

then:                                             ; preds = %loop.body
  %52 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %41, ptr %52, align 4
  %53 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 0, ptr %53, align 4
  %54 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 6
  %55 = load ptr, ptr %54, align 8
  call void %55(ptr %15, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, i64 4286578688, ptr %12)
  br label %join

join:                                             ; preds = %then, %loop.body
  %56 = mul i64 %41, %20
  %57 = add i64 0, %56
  %58 = mul i64 0, %24
  %59 = add i64 %57, %58
  %60 = getelementptr float, ptr %data, i64 %59
  %61 = select i1 %50, ptr %60, ptr %12
  %62 = select i1 %50, i64 %20, i64 32
  br label %loop2

loop2:                                            ; preds = %loop.exit8, %join
  %i5 = phi i64 [ 0, %join ], [ %76, %loop.exit8 ]
  %63 = icmp slt i64 %i5, 2
  br i1 %63, label %loop.body3, label %loop.exit4

loop.body3:                                       ; preds = %loop2
  br label %loop6

loop.exit4:                                       ; preds = %loop2
  br label %loop10

loop6:                                            ; preds = %loop.body7, %loop.body3
  %i9 = phi i64 [ 0, %loop.body3 ], [ %75, %loop.body7 ]
  %64 = icmp slt i64 %i9, 32
  br i1 %64, label %loop.body7, label %loop.exit8

loop.body7:                                       ; preds = %loop6
  %65 = mul i64 %i5, %62
  %66 = add i64 0, %65
  %67 = mul i64 %i9, 1
  %68 = add i64 %66, %67
  %69 = getelementptr inbounds float, ptr %61, i64 %68
  %70 = load float, ptr %69, align 4
  %71 = add i64 0, %i5
  %72 = mul i64 %71, 32
  %73 = add i64 %72, %i9
  %74 = getelementptr inbounds float, ptr %13, i64 %73
  store float %70, ptr %74, align 4
  %75 = add nuw nsw i64 %i9, 1
  br label %loop6, !llvm.loop !0

loop.exit8:                                       ; preds = %loop6
  %76 = add nuw nsw i64 %i5, 1
  br label %loop2

loop10:                                           ; preds = %join19, %loop.exit4
  %i13 = phi i64 [ 0, %loop.exit4 ], [ %101, %join19 ]
  %77 = icmp slt i64 %i13, 2
  br i1 %77, label %loop.body11, label %loop.exit12

loop.body11:                                      ; preds = %loop10
  store i32 0, ptr %8, align 4
  store float 0xFFF0000000000000, ptr %9, align 4
  br label %loop14

loop.exit12:                                      ; preds = %loop10
  br label %loop24

loop14:                                           ; preds = %loop.body15, %loop.body11
  %i17 = phi i64 [ 0, %loop.body11 ], [ %90, %loop.body15 ]
  %78 = icmp slt i64 %i17, 32
  br i1 %78, label %loop.body15, label %loop.exit16

loop.body15:                                      ; preds = %loop14
  %79 = add i64 0, %i13
  %80 = mul i64 %79, 32
  %81 = add i64 %80, %i17
  %82 = getelementptr inbounds float, ptr %13, i64 %81
  %83 = load float, ptr %82, align 4
  %84 = load float, ptr %9, align 4
  %85 = call nnan nsz float @llvm.maxnum.f32(float %84, float %83)
  %86 = bitcast float %83 to i32
  %87 = and i32 %86, 2147483647
  %88 = load i32, ptr %8, align 4
  %89 = call i32 @llvm.umax.i32(i32 %88, i32 %87)
  store i32 %89, ptr %8, align 4
  store float %85, ptr %9, align 4
  %90 = add nuw nsw i64 %i17, 1
  br label %loop14

loop.exit16:                                      ; preds = %loop14
  %91 = load i32, ptr %8, align 4
  %92 = icmp ugt i32 %91, 2139095040
  %93 = load float, ptr %9, align 4
  %94 = fcmp oeq float %93, 0.000000e+00
  %95 = xor i1 %92, true
  %96 = select i1 %95, i1 %94, i1 false
  br i1 %96, label %then18, label %join19

then18:                                           ; preds = %loop.exit16
  store float 0xFFF0000000000000, ptr %9, align 4
  br label %loop20

join19:                                           ; preds = %loop.exit22, %loop.exit16
  %97 = load float, ptr %9, align 4
  %98 = select i1 %92, float 0x7FF8000000000000, float %97
  %99 = add i64 0, %i13
  %100 = getelementptr inbounds float, ptr %11, i64 %99
  store float %98, ptr %100, align 4
  %101 = add nuw nsw i64 %i13, 1
  br label %loop10, !llvm.loop !2

loop20:                                           ; preds = %loop.body21, %then18
  %i23 = phi i64 [ 0, %then18 ], [ %110, %loop.body21 ]
  %102 = icmp slt i64 %i23, 32
  br i1 %102, label %loop.body21, label %loop.exit22

loop.body21:                                      ; preds = %loop20
  %103 = add i64 0, %i13
  %104 = mul i64 %103, 32
  %105 = add i64 %104, %i23
  %106 = getelementptr inbounds float, ptr %13, i64 %105
  %107 = load float, ptr %106, align 4
  %108 = load float, ptr %9, align 4
  %109 = call float @llvm.maximum.f32(float %108, float %107)
  store float %109, ptr %9, align 4
  %110 = add nuw nsw i64 %i23, 1
  br label %loop20

loop.exit22:                                      ; preds = %loop20
  br label %join19

loop24:                                           ; preds = %loop.exit30, %loop.exit12
  %i27 = phi i64 [ 0, %loop.exit12 ], [ %160, %loop.exit30 ]
  %111 = icmp slt i64 %i27, 2
  br i1 %111, label %loop.body25, label %loop.exit26

loop.body25:                                      ; preds = %loop24
  br label %loop28

loop.exit26:                                      ; preds = %loop24
  br label %loop32

loop28:                                           ; preds = %loop.body29, %loop.body25
  %i31 = phi i64 [ 0, %loop.body25 ], [ %159, %loop.body29 ]
  %112 = icmp slt i64 %i31, 32
  br i1 %112, label %loop.body29, label %loop.exit30

loop.body29:                                      ; preds = %loop28
  %113 = add i64 0, %i27
  %114 = mul i64 %113, 32
  %115 = add i64 %114, %i31
  %116 = getelementptr inbounds float, ptr %13, i64 %115
  %117 = load float, ptr %116, align 4
  %118 = add i64 0, %i27
  %119 = mul i64 %118, 1
  %120 = add i64 %119, 0
  %121 = urem i64 %120, 2
  %122 = udiv i64 %120, 2
  %123 = add i64 0, %121
  %124 = getelementptr inbounds float, ptr %11, i64 %123
  %125 = load float, ptr %124, align 4
  %126 = fsub float %117, %125
  %127 = fcmp olt float %126, -1.100000e+02
  %128 = select i1 %127, float -1.100000e+02, float %126
  %129 = fcmp ogt float %128, 9.000000e+01
  %130 = select i1 %129, float 9.000000e+01, float %128
  %131 = call float @llvm.fmuladd.f32(float %130, float 0x3FF7154760000000, float 0x4168000000000000)
  %132 = fsub float %131, 0x4168000000000000
  %133 = call float @llvm.fmuladd.f32(float %132, float 0xBFE6300000000000, float %130)
  %134 = call float @llvm.fmuladd.f32(float %132, float 0x3F2BD01060000000, float %133)
  %135 = bitcast float %131 to i32
  %136 = sub i32 %135, 1262485504
  %137 = call float @llvm.fmuladd.f32(float 0x3F2A0D2CE0000000, float %134, float 0x3F56E879C0000000)
  %138 = call float @llvm.fmuladd.f32(float %137, float %134, float 0x3F81112100000000)
  %139 = call float @llvm.fmuladd.f32(float %138, float %134, float 0x3FA5553820000000)
  %140 = call float @llvm.fmuladd.f32(float %139, float %134, float 0x3FC5555540000000)
  %141 = call float @llvm.fmuladd.f32(float %140, float %134, float 5.000000e-01)
  %142 = fmul float %134, %134
  %143 = call float @llvm.fmuladd.f32(float %141, float %142, float %134)
  %144 = fadd float %143, 1.000000e+00
  %145 = ashr i32 %136, 1
  %146 = sub i32 %136, %145
  %147 = add i32 %146, 127
  %148 = shl i32 %147, 23
  %149 = bitcast i32 %148 to float
  %150 = add i32 %145, 127
  %151 = shl i32 %150, 23
  %152 = bitcast i32 %151 to float
  %153 = fmul float %144, %152
  %154 = fmul float %153, %149
  %155 = add i64 0, %i27
  %156 = mul i64 %155, 32
  %157 = add i64 %156, %i31
  %158 = getelementptr inbounds float, ptr %7, i64 %157
  store float %154, ptr %158, align 4
  %159 = add nuw nsw i64 %i31, 1
  br label %loop28, !llvm.loop !4

loop.exit30:                                      ; preds = %loop28
  %160 = add nuw nsw i64 %i27, 1
  br label %loop24

loop32:                                           ; preds = %loop.exit38, %loop.exit26
  %i35 = phi i64 [ 0, %loop.exit26 ], [ %190, %loop.exit38 ]
  %161 = icmp slt i64 %i35, 2
  br i1 %161, label %loop.body33, label %loop.exit34

loop.body33:                                      ; preds = %loop32
  store float -0.000000e+00, ptr %4, align 4
  store i64 0, ptr %5, align 4
  br label %loop36

loop.exit34:                                      ; preds = %loop32
  %162 = icmp eq i64 %34, 1
  %163 = add i64 %41, 2
  %164 = icmp sle i64 %163, %28
  %165 = icmp sge i64 %41, 0
  %166 = and i1 %165, %164
  %167 = and i1 %162, %166
  %168 = icmp sle i64 32, %32
  %169 = and i1 true, %168
  %170 = and i1 %167, %169
  %171 = mul i64 %41, %30
  %172 = add i64 0, %171
  %173 = mul i64 0, %34
  %174 = add i64 %172, %173
  %175 = getelementptr float, ptr %data1, i64 %174
  %176 = select i1 %170, ptr %175, ptr %3
  %177 = select i1 %170, i64 %30, i64 32
  br label %loop40

loop36:                                           ; preds = %loop.body37, %loop.body33
  %i39 = phi i64 [ 0, %loop.body33 ], [ %186, %loop.body37 ]
  %178 = icmp slt i64 %i39, 32
  br i1 %178, label %loop.body37, label %loop.exit38

loop.body37:                                      ; preds = %loop36
  %179 = add i64 0, %i35
  %180 = mul i64 %179, 32
  %181 = add i64 %180, %i39
  %182 = getelementptr inbounds float, ptr %7, i64 %181
  %183 = load float, ptr %182, align 4
  %184 = load float, ptr %4, align 4
  %185 = fadd reassoc float %184, %183
  store float %185, ptr %4, align 4
  %186 = add nuw nsw i64 %i39, 1
  br label %loop36

loop.exit38:                                      ; preds = %loop36
  %187 = load float, ptr %4, align 4
  %188 = add i64 0, %i35
  %189 = getelementptr inbounds float, ptr %6, i64 %188
  store float %187, ptr %189, align 4
  %190 = add nuw nsw i64 %i35, 1
  br label %loop32, !llvm.loop !5

loop40:                                           ; preds = %loop.exit46, %loop.exit34
  %i43 = phi i64 [ 0, %loop.exit34 ], [ %214, %loop.exit46 ]
  %191 = icmp slt i64 %i43, 2
  br i1 %191, label %loop.body41, label %loop.exit42

loop.body41:                                      ; preds = %loop40
  br label %loop44

loop.exit42:                                      ; preds = %loop40
  %192 = xor i1 %170, true
  br i1 %192, label %then48, label %join49

loop44:                                           ; preds = %loop.body45, %loop.body41
  %i47 = phi i64 [ 0, %loop.body41 ], [ %213, %loop.body45 ]
  %193 = icmp slt i64 %i47, 32
  br i1 %193, label %loop.body45, label %loop.exit46

loop.body45:                                      ; preds = %loop44
  %194 = mul i64 %i43, %177
  %195 = add i64 0, %194
  %196 = mul i64 %i47, 1
  %197 = add i64 %195, %196
  %198 = getelementptr inbounds float, ptr %176, i64 %197
  %199 = add i64 0, %i43
  %200 = mul i64 %199, 32
  %201 = add i64 %200, %i47
  %202 = getelementptr inbounds float, ptr %7, i64 %201
  %203 = load float, ptr %202, align 4
  %204 = add i64 0, %i43
  %205 = mul i64 %204, 1
  %206 = add i64 %205, 0
  %207 = urem i64 %206, 2
  %208 = udiv i64 %206, 2
  %209 = add i64 0, %207
  %210 = getelementptr inbounds float, ptr %6, i64 %209
  %211 = load float, ptr %210, align 4
  %212 = fdiv float %203, %211
  store float %212, ptr %198, align 4
  %213 = add nuw nsw i64 %i47, 1
  br label %loop44, !llvm.loop !6

loop.exit46:                                      ; preds = %loop44
  %214 = add nuw nsw i64 %i43, 1
  br label %loop40

then48:                                           ; preds = %loop.exit42
  %215 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %41, ptr %215, align 4
  %216 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 0, ptr %216, align 4
  %217 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %218 = load ptr, ptr %217, align 8
  call void %218(ptr %25, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, ptr %3)
  br label %join49

join49:                                           ; preds = %then48, %loop.exit42
  %219 = add nuw nsw i64 %i, 1
  br label %loop
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.maxnum.f32(float, float) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i32 @llvm.umax.i32(i32, i32) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.maximum.f32(float, float) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.fmuladd.f32(float, float, float) #1

attributes #0 = { nounwind "min-legal-vector-width"="256" "prefer-vector-width"="256" }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.interleave.count", i32 4}
!2 = distinct !{!2, !3}
!3 = !{!"llvm.loop.interleave.count", i32 1}
!4 = distinct !{!4, !1}
!5 = distinct !{!5, !3}
!6 = distinct !{!6, !1}
