#ifndef DBG_CALC_H
#define DBG_CALC_H
int calc_alpha(int n);
int calc_beta(int n);
int calc_gamma(int n);
int calc_delta(int n);
int calc_epsilon(int n);
int calc_zeta(int n);
int calc_eta(int n);
int calc_theta(int n);
int calc_all(int n);
#endif
