/* Constants of rbf_bayes/_likelihood.pxd (declared there in `cdef extern from "_likelihood.h"`). */
#ifndef RBF_LIKELIHOOD_H
#define RBF_LIKELIHOOD_H
#define RBF_LOG_2PI 1.8378770664093453   /* log(2 pi) */
#endif
