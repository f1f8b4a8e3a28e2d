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
  %8 = alloca i1, align 1
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
  %i = phi i64 [ %1, %entry ], [ %217, %join49 ]
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
  %i13 = phi i64 [ 0, %loop.exit4 ], [ %99, %join19 ]
  %77 = icmp slt i64 %i13, 2
  br i1 %77, label %loop.body11, label %loop.exit12

loop.body11:                                      ; preds = %loop10
  store i1 false, ptr %8, align 1
  store float 0xFFF0000000000000, ptr %9, align 4
  br label %loop14

loop.exit12:                                      ; preds = %loop10
  br label %loop24

loop14:                                           ; preds = %loop.body15, %loop.body11
  %i17 = phi i64 [ 0, %loop.body11 ], [ %89, %loop.body15 ]
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
  %86 = fcmp uno float %83, %83
  %87 = load i1, ptr %8, align 1
  %88 = or i1 %87, %86
  store i1 %88, ptr %8, align 1
  store float %85, ptr %9, align 4
  %89 = add nuw nsw i64 %i17, 1
  br label %loop14

loop.exit16:                                      ; preds = %loop14
  %90 = load i1, ptr %8, align 1
  %91 = load float, ptr %9, align 4
  %92 = fcmp oeq float %91, 0.000000e+00
  %93 = xor i1 %90, true
  %94 = select i1 %93, i1 %92, i1 false
  br i1 %94, label %then18, label %join19

then18:                                           ; preds = %loop.exit16
  store float 0xFFF0000000000000, ptr %9, align 4
  br label %loop20

join19:                                           ; preds = %loop.exit22, %loop.exit16
  %95 = load float, ptr %9, align 4
  %96 = select i1 %90, float 0x7FF8000000000000, float %95
  %97 = add i64 0, %i13
  %98 = getelementptr inbounds float, ptr %11, i64 %97
  store float %96, ptr %98, align 4
  %99 = add nuw nsw i64 %i13, 1
  br label %loop10, !llvm.loop !2

loop20:                                           ; preds = %loop.body21, %then18
  %i23 = phi i64 [ 0, %then18 ], [ %108, %loop.body21 ]
  %100 = icmp slt i64 %i23, 32
  br i1 %100, label %loop.body21, label %loop.exit22

loop.body21:                                      ; preds = %loop20
  %101 = add i64 0, %i13
  %102 = mul i64 %101, 32
  %103 = add i64 %102, %i23
  %104 = getelementptr inbounds float, ptr %13, i64 %103
  %105 = load float, ptr %104, align 4
  %106 = load float, ptr %9, align 4
  %107 = call float @llvm.maximum.f32(float %106, float %105)
  store float %107, ptr %9, align 4
  %108 = add nuw nsw i64 %i23, 1
  br label %loop20

loop.exit22:                                      ; preds = %loop20
  br label %join19

loop24:                                           ; preds = %loop.exit30, %loop.exit12
  %i27 = phi i64 [ 0, %loop.exit12 ], [ %158, %loop.exit30 ]
  %109 = icmp slt i64 %i27, 2
  br i1 %109, label %loop.body25, label %loop.exit26

loop.body25:                                      ; preds = %loop24
  br label %loop28

loop.exit26:                                      ; preds = %loop24
  br label %loop32

loop28:                                           ; preds = %loop.body29, %loop.body25
  %i31 = phi i64 [ 0, %loop.body25 ], [ %157, %loop.body29 ]
  %110 = icmp slt i64 %i31, 32
  br i1 %110, label %loop.body29, label %loop.exit30

loop.body29:                                      ; preds = %loop28
  %111 = add i64 0, %i27
  %112 = mul i64 %111, 32
  %113 = add i64 %112, %i31
  %114 = getelementptr inbounds float, ptr %13, i64 %113
  %115 = load float, ptr %114, align 4
  %116 = add i64 0, %i27
  %117 = mul i64 %116, 1
  %118 = add i64 %117, 0
  %119 = urem i64 %118, 2
  %120 = udiv i64 %118, 2
  %121 = add i64 0, %119
  %122 = getelementptr inbounds float, ptr %11, i64 %121
  %123 = load float, ptr %122, align 4
  %124 = fsub float %115, %123
  %125 = fcmp olt float %124, -1.100000e+02
  %126 = select i1 %125, float -1.100000e+02, float %124
  %127 = fcmp ogt float %126, 9.000000e+01
  %128 = select i1 %127, float 9.000000e+01, float %126
  %129 = call float @llvm.fmuladd.f32(float %128, float 0x3FF7154760000000, float 0x4168000000000000)
  %130 = fsub float %129, 0x4168000000000000
  %131 = call float @llvm.fmuladd.f32(float %130, float 0xBFE6300000000000, float %128)
  %132 = call float @llvm.fmuladd.f32(float %130, float 0x3F2BD01060000000, float %131)
  %133 = bitcast float %129 to i32
  %134 = sub i32 %133, 1262485504
  %135 = call float @llvm.fmuladd.f32(float 0x3F2A0D2CE0000000, float %132, float 0x3F56E879C0000000)
  %136 = call float @llvm.fmuladd.f32(float %135, float %132, float 0x3F81112100000000)
  %137 = call float @llvm.fmuladd.f32(float %136, float %132, float 0x3FA5553820000000)
  %138 = call float @llvm.fmuladd.f32(float %137, float %132, float 0x3FC5555540000000)
  %139 = call float @llvm.fmuladd.f32(float %138, float %132, float 5.000000e-01)
  %140 = fmul float %132, %132
  %141 = call float @llvm.fmuladd.f32(float %139, float %140, float %132)
  %142 = fadd float %141, 1.000000e+00
  %143 = ashr i32 %134, 1
  %144 = sub i32 %134, %143
  %145 = add i32 %144, 127
  %146 = shl i32 %145, 23
  %147 = bitcast i32 %146 to float
  %148 = add i32 %143, 127
  %149 = shl i32 %148, 23
  %150 = bitcast i32 %149 to float
  %151 = fmul float %142, %150
  %152 = fmul float %151, %147
  %153 = add i64 0, %i27
  %154 = mul i64 %153, 32
  %155 = add i64 %154, %i31
  %156 = getelementptr inbounds float, ptr %7, i64 %155
  store float %152, ptr %156, align 4
  %157 = add nuw nsw i64 %i31, 1
  br label %loop28, !llvm.loop !4

loop.exit30:                                      ; preds = %loop28
  %158 = add nuw nsw i64 %i27, 1
  br label %loop24

loop32:                                           ; preds = %loop.exit38, %loop.exit26
  %i35 = phi i64 [ 0, %loop.exit26 ], [ %188, %loop.exit38 ]
  %159 = icmp slt i64 %i35, 2
  br i1 %159, label %loop.body33, label %loop.exit34

loop.body33:                                      ; preds = %loop32
  store float -0.000000e+00, ptr %4, align 4
  store i64 0, ptr %5, align 4
  br label %loop36

loop.exit34:                                      ; preds = %loop32
  %160 = icmp eq i64 %34, 1
  %161 = add i64 %41, 2
  %162 = icmp sle i64 %161, %28
  %163 = icmp sge i64 %41, 0
  %164 = and i1 %163, %162
  %165 = and i1 %160, %164
  %166 = icmp sle i64 32, %32
  %167 = and i1 true, %166
  %168 = and i1 %165, %167
  %169 = mul i64 %41, %30
  %170 = add i64 0, %169
  %171 = mul i64 0, %34
  %172 = add i64 %170, %171
  %173 = getelementptr float, ptr %data1, i64 %172
  %174 = select i1 %168, ptr %173, ptr %3
  %175 = select i1 %168, i64 %30, i64 32
  br label %loop40

loop36:                                           ; preds = %loop.body37, %loop.body33
  %i39 = phi i64 [ 0, %loop.body33 ], [ %184, %loop.body37 ]
  %176 = icmp slt i64 %i39, 32
  br i1 %176, label %loop.body37, label %loop.exit38

loop.body37:                                      ; preds = %loop36
  %177 = add i64 0, %i35
  %178 = mul i64 %177, 32
  %179 = add i64 %178, %i39
  %180 = getelementptr inbounds float, ptr %7, i64 %179
  %181 = load float, ptr %180, align 4
  %182 = load float, ptr %4, align 4
  %183 = fadd reassoc float %182, %181
  store float %183, ptr %4, align 4
  %184 = add nuw nsw i64 %i39, 1
  br label %loop36

loop.exit38:                                      ; preds = %loop36
  %185 = load float, ptr %4, align 4
  %186 = add i64 0, %i35
  %187 = getelementptr inbounds float, ptr %6, i64 %186
  store float %185, ptr %187, align 4
  %188 = add nuw nsw i64 %i35, 1
  br label %loop32, !llvm.loop !5

loop40:                                           ; preds = %loop.exit46, %loop.exit34
  %i43 = phi i64 [ 0, %loop.exit34 ], [ %212, %loop.exit46 ]
  %189 = icmp slt i64 %i43, 2
  br i1 %189, label %loop.body41, label %loop.exit42

loop.body41:                                      ; preds = %loop40
  br label %loop44

loop.exit42:                                      ; preds = %loop40
  %190 = xor i1 %168, true
  br i1 %190, label %then48, label %join49

loop44:                                           ; preds = %loop.body45, %loop.body41
  %i47 = phi i64 [ 0, %loop.body41 ], [ %211, %loop.body45 ]
  %191 = icmp slt i64 %i47, 32
  br i1 %191, label %loop.body45, label %loop.exit46

loop.body45:                                      ; preds = %loop44
  %192 = mul i64 %i43, %175
  %193 = add i64 0, %192
  %194 = mul i64 %i47, 1
  %195 = add i64 %193, %194
  %196 = getelementptr inbounds float, ptr %174, i64 %195
  %197 = add i64 0, %i43
  %198 = mul i64 %197, 32
  %199 = add i64 %198, %i47
  %200 = getelementptr inbounds float, ptr %7, i64 %199
  %201 = load float, ptr %200, align 4
  %202 = add i64 0, %i43
  %203 = mul i64 %202, 1
  %204 = add i64 %203, 0
  %205 = urem i64 %204, 2
  %206 = udiv i64 %204, 2
  %207 = add i64 0, %205
  %208 = getelementptr inbounds float, ptr %6, i64 %207
  %209 = load float, ptr %208, align 4
  %210 = fdiv float %201, %209
  store float %210, ptr %196, align 4
  %211 = add nuw nsw i64 %i47, 1
  br label %loop44, !llvm.loop !6

loop.exit46:                                      ; preds = %loop44
  %212 = add nuw nsw i64 %i43, 1
  br label %loop40

then48:                                           ; preds = %loop.exit42
  %213 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 0
  store i64 %41, ptr %213, align 4
  %214 = getelementptr inbounds [4 x i64], ptr %block_firsts, i64 0, i64 1
  store i64 0, ptr %214, align 4
  %215 = getelementptr inbounds { ptr, [3 x i64], ptr, ptr, ptr, ptr, ptr, ptr }, ptr %0, i32 0, i32 7
  %216 = load ptr, ptr %215, align 8
  call void %216(ptr %25, i32 2, i32 4, ptr %block_firsts, ptr @block_shape, ptr %3)
  br label %join49

join49:                                           ; preds = %then48, %loop.exit42
  %217 = add nuw nsw i64 %i, 1
  br label %loop
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.maxnum.f32(float, float) #1

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
