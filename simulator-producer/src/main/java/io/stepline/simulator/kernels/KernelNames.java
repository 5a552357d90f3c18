package io.stepline.simulator.kernels;

/** Mangled names of the kernels a Llama-style forward pass launches (as CUPTI reports them). */
public final class KernelNames {
    private KernelNames() {}

    public static final String RMS_NORM = "_ZN4vllm15rms_norm_kernelIN3c108BFloat16ELi8ELi3EEEvPT_PKS3_S6_fii";
    public static final String GEMM_QKV = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
    public static final String ROPE = "_ZN4vllm23rotary_embedding_kernelIN3c108BFloat16ELb1EEEvPKlPT_S6_PKS5_iiiii";
    /** Prefill attention (FlashAttention varlen forward). */
    public static final String ATTN_PREFILL = "_ZN5flash20flash_fwd_varlen_kernelI23Flash_fwd_kernel_traitsILi128ELi128ELi64ELi4ELb0ELb0EN7cutlass10bfloat16_tEELb1ELb0ELb0ELb0ELb1ELb1ELb0EEEv16Flash_fwd_params";
    /** Decode attention (paged attention, split-KV). */
    public static final String ATTN_DECODE = "_ZN4vllm25paged_attention_v2_kernelIN3c108BFloat16ES2_Li128ELi16ELi128ELNS_18Fp8KVCacheDataTypeE0ELb0ELi512EEEvPfS5_PT_PKS6_PKT0_SC_ifPKiSE_iPKfiiiSG_SG_";
    public static final String GEMM_O = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
    public static final String GEMM_UP = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
    /** The mis-built MLP GEMMs of the KERNEL_REGRESSION fault: the same GEMMs with another tile configuration. */
    public static final String GEMM_UP_REGRESSED = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
    public static final String GEMM_DOWN_REGRESSED = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_on_kernel__5x_cublas";
    public static final String SILU = "_ZN4vllm18act_and_mul_kernelIN3c108BFloat16EXadL_ZNS_11silu_kernelIS2_EET_RKS4_EELb1EEEvPS4_PS5_i";
    public static final String GEMM_DOWN = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas";
    public static final String ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    public static final String SAMPLER_SOFTMAX = "_ZN2at6native43_GLOBAL__N__softmax_warp_forwardIfffLi10ELb0ELb0EEEvPT0_PKT_iiiPKbib";
    public static final String SAMPLER_TOPK = "_ZN2at6native6sbtopk10gatherTopKIflLi1ELb0EEEvNS_4cuda6detail10TensorInfoIKT_T0_EES8_S8_bS8_S8_NS5_IS6_S8_EES8_NS5_IlS8_EES8_Pl";
    public static final String MEMCPY_H2D = "Memcpy HtoD (Pinned -> Device)";
    public static final String MEMCPY_D2H = "Memcpy DtoH (Device -> Pinned)";
}
