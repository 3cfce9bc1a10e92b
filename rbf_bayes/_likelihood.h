/* Constants of rbf_bayes/_likelihood.pxd (declared there in `cdef extern from "_likelihood.h"`). */
#ifndef RBF_LIKELIHOOD_H
#define RBF_LIKELIHOOD_H
#define RBF_LOG_2PI 1.8378770664093453   /* log(2 pi) */
/* gamma0 + y'Py below this share of gamma0 + y'y is the rounding of y'y - e, not a residual: sigma^2's conditional
   takes its scale at this floor (nbs/04_kernel, `_rjmcmc` `_hypers`) */
#define RBF_YPY_REL_MIN 1e-12
#endif
