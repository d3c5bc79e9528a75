"""The Coq library every generated lemma imports: helper lemmas (all proved, so nothing in it is
trusted beyond Coq's kernel) and the tactics of the scripts of :mod:`verify.proofs.coq_scripts`.
Compiled once per ``prove --coq`` run (:mod:`verify.proofs.coq`).
"""

__all__ = ["LIBRARY"]

LIBRARY = r"""(* verify.proofs.coq: helper lemmas and tactics of the generated lemmas, all proved *)
From Coq Require Import Reals Lra Psatz.
Open Scope R_scope.

Lemma frac_le : forall l r n d, l - r = n / d -> 0 < d -> n <= 0 -> l <= r.
Proof.
  intros l r n d E D N. assert (0 < / d) by (apply Rinv_0_lt_compat; lra).
  assert (n / d <= 0) by (unfold Rdiv; nra). lra.
Qed.
Lemma frac_lt : forall l r n d, l - r = n / d -> 0 < d -> n < 0 -> l < r.
Proof.
  intros l r n d E D N. assert (0 < / d) by (apply Rinv_0_lt_compat; lra).
  assert (n / d < 0) by (unfold Rdiv; nra). lra.
Qed.
Lemma frac_eq : forall l r n d, l - r = n / d -> n = 0 -> l = r.
Proof. intros l r n d E N. rewrite N in E. unfold Rdiv in E. lra. Qed.
Lemma clear_le : forall l r n d, l <= r -> l - r = n / d -> 0 < d -> n <= 0.
Proof.
  intros l r n d H E D. assert (n = (l - r) * d) by (rewrite E; field; lra).
  assert (0 <= r - l) by lra. nra.
Qed.
Lemma clear_lt : forall l r n d, l < r -> l - r = n / d -> 0 < d -> n < 0.
Proof.
  intros l r n d H E D. assert (n = (l - r) * d) by (rewrite E; field; lra).
  assert (0 < r - l) by lra. nra.
Qed.
Lemma clear_eq : forall l r n d, l = r -> l - r = n / d -> d <> 0 -> n = 0.
Proof.
  intros l r n d H E D. assert (n = (l - r) * d) by (rewrite E; field; assumption).
  rewrite H in *. lra.
Qed.
Lemma exp_pow : forall n x y, y = INR n * x -> exp y = exp x ^ n.
Proof.
  intros n x y ->. induction n as [|n IH].
  - simpl. rewrite Rmult_0_l. apply exp_0.
  - rewrite S_INR, Rmult_plus_distr_r, Rmult_1_l, exp_plus, IH. simpl. ring.
Qed.
Lemma exp_pow_inv : forall n x y, y = - (INR n * x) -> exp y = / exp x ^ n.
Proof. intros n x y ->. rewrite exp_Ropp. f_equal. apply exp_pow. reflexivity. Qed.
Lemma sq_pos : forall x, x <> 0 -> 0 < x ^ 2.
Proof. intros x H. destruct (Rlt_or_le 0 x); [nra | ]. destruct H0; [nra | contradiction]. Qed.

Lemma mul_pp : forall a b, a <= 0 -> b <= 0 -> 0 <= a * b.
Proof. intros. nra. Qed.
Lemma mul_np : forall a b, 0 <= a -> b <= 0 -> a * b <= 0.
Proof. intros. nra. Qed.
Lemma mul_pn : forall a b, a <= 0 -> 0 <= b -> a * b <= 0.
Proof. intros. nra. Qed.
Lemma mul_pp_lt : forall a b, a < 0 -> b < 0 -> 0 < a * b.
Proof. intros. nra. Qed.
Lemma mul_np_lt : forall a b, 0 < a -> b < 0 -> a * b < 0.
Proof. intros. nra. Qed.
Lemma mul_pn_lt : forall a b, a < 0 -> 0 < b -> a * b < 0.
Proof. intros. nra. Qed.

Ltac close := first [ assumption | lra | nra | (intro; first [ lra | nra ]) ].
(* the sign of a product, factor by factor (every sign pattern tried), else close *)
Ltac sgn := first [ lra | match goal with
  | |- 0 <= ?a * ?b => first [ apply Rmult_le_pos; sgn | apply mul_pp; sgn ]
  | |- ?a * ?b <= 0 => first [ apply mul_np; sgn | apply mul_pn; sgn ]
  | |- 0 < ?a * ?b => first [ apply Rmult_lt_0_compat; sgn | apply mul_pp_lt; sgn ]
  | |- ?a * ?b < 0 => first [ apply mul_np_lt; sgn | apply mul_pn_lt; sgn ]
  | |- 0 <= _ ^ 2 => apply pow2_ge_0
  | |- 0 <= _ ^ _ => apply pow_le; sgn
  | |- 0 < _ ^ _ => first [ apply pow_lt; sgn | apply sq_pos; close ]
  | |- 0 < / _ => apply Rinv_0_lt_compat; sgn
  end | nra ].
Ltac pos := sgn.
Ltac split_nonsmooth := repeat match goal with
  | |- context [Rabs ?x] => destruct (Rle_lt_dec 0 x);
      [ rewrite (Rabs_pos_eq x) in * by lra | rewrite (Rabs_left x) in * by lra ]
  | H : context [Rabs ?x] |- _ => destruct (Rle_lt_dec 0 x);
      [ rewrite (Rabs_pos_eq x) in * by lra | rewrite (Rabs_left x) in * by lra ]
  | |- context [Rmax ?x ?y] => destruct (Rle_lt_dec x y);
      [ rewrite (Rmax_right x y) in * by lra | rewrite (Rmax_left x y) in * by lra ]
  | H : context [Rmax ?x ?y] |- _ => destruct (Rle_lt_dec x y);
      [ rewrite (Rmax_right x y) in * by lra | rewrite (Rmax_left x y) in * by lra ]
  | |- context [Rmin ?x ?y] => destruct (Rle_lt_dec x y);
      [ rewrite (Rmin_left x y) in * by lra | rewrite (Rmin_right x y) in * by lra ]
  | H : context [Rmin ?x ?y] |- _ => destruct (Rle_lt_dec x y);
      [ rewrite (Rmin_left x y) in * by lra | rewrite (Rmin_right x y) in * by lra ]
  end.
Ltac subst_defs := repeat match goal with
  | H : ?x = ?t |- _ => is_var x; subst x
  end.
Ltac field_close := field; repeat split; close.
"""
