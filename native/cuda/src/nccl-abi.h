// NCCL's types and the prototypes of the functions span calls (dlopened libnccl.so.2), written
// from NCCL's public header nccl.h (NVIDIA/nccl src/nccl.h.in, NCCL 2.x: these have been stable
// since 2.7), so that span builds without NCCL. tools/check-nccl-abi.sh holds them against a
// real nccl.h (pip's nvidia-nccl-cu12 wheel carries one under nvidia/nccl/include) where one is
// at hand: with SPAN_ABI_CHECK_NCCL defined after <nccl.h>, the types below are nccl.h's own.
#ifndef SPAN_NCCL_ABI_H
#define SPAN_NCCL_ABI_H

#include <stddef.h>

/* ---- NCCL (nccl.h) ---- */
#define SPAN_NCCL_UNIQUE_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */
#define SPAN_ncclSuccess 0
#define SPAN_ncclUnhandledCudaError 1
#define SPAN_ncclSystemError 2
#define SPAN_ncclInternalError 3
#define SPAN_ncclInvalidArgument 4
#define SPAN_ncclInvalidUsage 5
#define SPAN_ncclRemoteError 6
#define SPAN_ncclInProgress 7
#define SPAN_ncclSum 0
#define SPAN_ncclProd 1
#define SPAN_ncclMax 2
#define SPAN_ncclMin 3
#define SPAN_ncclAvg 4
#define SPAN_ncclInt32 2
#define SPAN_ncclFloat32 7
#define SPAN_ncclFloat64 8
#define SPAN_ncclBfloat16 9

#ifdef SPAN_ABI_CHECK_NCCL
typedef ncclResult_t SPAN_ncclResult_t;
typedef ncclComm_t SPAN_ncclComm_t;
typedef ncclUniqueId SPAN_ncclUniqueId;
typedef ncclDataType_t SPAN_ncclDataType_t;
typedef ncclRedOp_t SPAN_ncclRedOp_t;
typedef cudaStream_t SPAN_ncclStream_t;
#else
typedef int SPAN_ncclResult_t; /* an enum: int-sized */
typedef struct SPAN_ncclComm* SPAN_ncclComm_t;
typedef struct {
  char internal[SPAN_NCCL_UNIQUE_ID_BYTES];
} SPAN_ncclUniqueId; /* passed by value to ncclCommInitRank */
typedef int SPAN_ncclDataType_t;
typedef int SPAN_ncclRedOp_t;
typedef struct SPAN_CUstream_st* SPAN_ncclStream_t; /* cudaStream_t is CUstream */
#endif

typedef SPAN_ncclResult_t (*span_ncclGetVersion_t)(int* version);
typedef SPAN_ncclResult_t (*span_ncclGetUniqueId_t)(SPAN_ncclUniqueId* uniqueId);
typedef SPAN_ncclResult_t (*span_ncclCommInitRank_t)(SPAN_ncclComm_t* comm, int nranks, SPAN_ncclUniqueId commId, int rank);
typedef SPAN_ncclResult_t (*span_ncclCommDestroy_t)(SPAN_ncclComm_t comm);
typedef SPAN_ncclResult_t (*span_ncclCommAbort_t)(SPAN_ncclComm_t comm);
typedef SPAN_ncclResult_t (*span_ncclCommGetAsyncError_t)(SPAN_ncclComm_t comm, SPAN_ncclResult_t* asyncError);
typedef const char* (*span_ncclGetErrorString_t)(SPAN_ncclResult_t result);
typedef const char* (*span_ncclGetLastError_t)(SPAN_ncclComm_t comm);
typedef SPAN_ncclResult_t (*span_ncclAllReduce_t)(const void* sendbuff, void* recvbuff, size_t count, SPAN_ncclDataType_t datatype, SPAN_ncclRedOp_t op,
                                                  SPAN_ncclComm_t comm, SPAN_ncclStream_t stream);
typedef SPAN_ncclResult_t (*span_ncclBroadcast_t)(const void* sendbuff, void* recvbuff, size_t count, SPAN_ncclDataType_t datatype, int root,
                                                  SPAN_ncclComm_t comm, SPAN_ncclStream_t stream);
typedef SPAN_ncclResult_t (*span_ncclGroupStart_t)(void);
typedef SPAN_ncclResult_t (*span_ncclGroupEnd_t)(void);

#endif
