// Matrix products against PyTorch 1.13: mm, bmm, addmm, matmul and linear. Expected values come
// from plain triple loops over the same inputs (exact for the small integers and halves used in
// Float, within rounding for Double); error texts are PyTorch's.

#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <typeinfo>

#include "op_test_util.h"

namespace opd::test {
namespace {

using test::error_of_type;

// A row-major m x n matrix of values.
struct Mat {
  // Not an aggregate, so that a braced list of values never converts to a Mat.
  Mat(int64_t r, int64_t c, std::vector<double> values) : rows(r), cols(c), v(std::move(values)) {}
  int64_t rows, cols;
  std::vector<double> v;
  double at(int64_t i, int64_t j) const { return v[i * cols + j]; }
};

// Small halves and integers, different for each seed, exact in Float products and sums.
Mat sample(int64_t rows, int64_t cols, int seed) {
  Mat m{rows, cols, std::vector<double>(rows * cols)};
  for (int64_t i = 0; i < rows * cols; ++i)
    m.v[i] = static_cast<double>((i * 7 + seed * 5) % 11) / 2 - 2.5;
  return m;
}

// a (m x k) times b (k x n), by the definition.
Mat naive_mm(const Mat& a, const Mat& b) {
  Mat c{a.rows, b.cols, std::vector<double>(a.rows * b.cols, 0.0)};
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j)
      for (int64_t p = 0; p < a.cols; ++p) c.v[i * b.cols + j] += a.at(i, p) * b.at(p, j);
  return c;
}

Mat transposed(const Mat& a) {
  Mat t{a.cols, a.rows, std::vector<double>(a.v.size())};
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t.v[j * a.rows + i] = a.at(i, j);
  return t;
}

// Concatenation of row-major blocks (a batch of matrices).
std::vector<double> join(const std::vector<Mat>& ms) {
  std::vector<double> out;
  for (const Mat& m : ms) out.insert(out.end(), m.v.begin(), m.v.end());
  return out;
}

class LinalgOps : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { load_default_plugins(); }
  Tensor in(const std::vector<double>& v, std::vector<int64_t> sizes,
            ScalarType dt = kFloat) const {
    return tensor(v, std::move(sizes), dt, GetParam());
  }
  Tensor in(const Mat& m, ScalarType dt = kFloat) const { return in(m.v, {m.rows, m.cols}, dt); }
  static Tensor ex(const std::vector<double>& v, std::vector<int64_t> sizes,
                   ScalarType dt = kFloat) {
    return tensor(v, std::move(sizes), dt);
  }
  static Tensor ex(const Mat& m, ScalarType dt = kFloat) { return ex(m.v, {m.rows, m.cols}, dt); }
};

// ---- mm -----------------------------------------------------------------------------------------

TEST_P(LinalgOps, MmFloatAndDoubleMatchTheDefinition) {
  Mat a = sample(3, 4, 1), b = sample(4, 5, 2);
  Mat c = naive_mm(a, b);
  EXPECT_TRUE(tensors_equal(opd::mm(in(a), in(b)), ex(c)));
  EXPECT_TRUE(tensors_equal(in(a).mm(in(b)), ex(c)));
  EXPECT_TRUE(tensors_equal(opd::mm(in(a, kDouble), in(b, kDouble)), ex(c, kDouble)));

  // Values that are not exact in binary, compared in Double.
  Mat x{2, 3, {0.1, -0.7, 1.3, 2.9, 0.01, -5.5}}, y{3, 2, {1.1, 0.3, -0.2, 4.4, 0.5, -1.9}};
  EXPECT_TRUE(
      tensors_equal(opd::mm(in(x, kDouble), in(y, kDouble)), ex(naive_mm(x, y), kDouble), 1e-12));
}

TEST_P(LinalgOps, MmResultIsContiguous) {
  Tensor c = opd::mm(in(sample(3, 4, 1)).t().t(), in(sample(4, 5, 2)));
  EXPECT_EQ(sizes(c), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(strides(c), (std::vector<int64_t>{5, 1}));
}

TEST_P(LinalgOps, MmInt64IsExact) {
  Mat a = sample(3, 4, 3), b = sample(4, 2, 4);
  for (double& v : a.v) v *= 2;  // integers
  for (double& v : b.v) v *= 2;
  EXPECT_TRUE(tensors_equal(opd::mm(in(a, kLong), in(b, kLong)), ex(naive_mm(a, b), kLong)));
  EXPECT_TRUE(tensors_equal(opd::mm(in(a, kInt), in(b, kInt)), ex(naive_mm(a, b), kInt)));

  // A product past 2^53: a Double (BLAS) path would round it.
  Tensor p = opd::mm(in({2147483649.0, 1}, {1, 2}, kLong), in({2147483651.0, 5}, {2, 1}, kLong));
  EXPECT_EQ(p.item<int64_t>(), int64_t{2147483649} * int64_t{2147483651} + 5);
}

TEST_P(LinalgOps, MmOfTransposedAndSlicedOperands) {
  Mat a = sample(3, 4, 5), b = sample(4, 5, 6);
  Mat c = naive_mm(a, b);
  Tensor at = in(transposed(a)).t();  // logical a, column-major
  Tensor bt = in(transposed(b)).t();
  EXPECT_FALSE(at.is_contiguous());
  EXPECT_TRUE(tensors_equal(opd::mm(at, in(b)), ex(c)));
  EXPECT_TRUE(tensors_equal(opd::mm(in(a), bt), ex(c)));
  EXPECT_TRUE(tensors_equal(opd::mm(at, bt), ex(c)));

  // Every other column of a 3 x 8 matrix: strides (8, 2), neither row- nor column-major.
  Mat wide{3, 8, std::vector<double>(24, 0.0)};
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) wide.v[i * 8 + 2 * j] = a.at(i, j);
  Tensor sliced = in(wide).slice(1, 0, 8, 2);
  EXPECT_TRUE(tensors_equal(opd::mm(sliced, in(b)), ex(c)));
  EXPECT_TRUE(tensors_equal(opd::mm(sliced, in(b, kFloat).t().contiguous().t()), ex(c)));

  Mat ai = a, bi = b;
  for (double& v : ai.v) v *= 2;
  for (double& v : bi.v) v *= 2;
  EXPECT_TRUE(tensors_equal(opd::mm(in(transposed(ai), kLong).t(), in(transposed(bi), kLong).t()),
                            ex(naive_mm(ai, bi), kLong)));
}

TEST_P(LinalgOps, MmOfEmptyMatrices) {
  Tensor z = opd::mm(opd::empty({2, 0}, TensorOptions().device(GetParam())),
                     opd::empty({0, 3}, TensorOptions().device(GetParam())));
  EXPECT_TRUE(tensors_equal(z, ex(std::vector<double>(6, 0.0), {2, 3})));
  Tensor e = opd::mm(opd::empty({0, 3}, TensorOptions().device(GetParam())), in(sample(3, 2, 1)));
  EXPECT_EQ(sizes(e), (std::vector<int64_t>{0, 2}));
}

TEST_P(LinalgOps, MmErrors) {
  EXPECT_EQ(error_of_type<Error>([&] { opd::mm(in(sample(2, 3, 1)), in(sample(4, 5, 1))); }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::mm(in({1, 2}, {2}), in(sample(2, 2, 1)));
            }),
            "self must be a matrix");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::mm(in(sample(2, 2, 1)), in({1, 2}, {2}));
            }),
            "mat2 must be a matrix");
  EXPECT_EQ(
      error_of_type<Error>([&] { opd::mm(in(sample(2, 2, 1)), in(sample(2, 2, 1), kDouble)); }),
      "expected scalar type Float but found Double");
}

// PyTorch 1.13 returns before its dtype check when there is nothing to multiply: zeros of
// self's dtype for an empty inner dimension, an empty result, whatever mat2's dtype.
TEST_P(LinalgOps, MmWithNothingToMultiplyTakesAnyDtypeOfMat2) {
  Tensor zeros = opd::mm(in({}, {2, 0}), in({}, {0, 3}, kDouble));
  EXPECT_EQ(zeros.scalar_type(), kFloat);
  EXPECT_EQ(values(zeros), std::vector<double>(6, 0.0));
  Tensor empty = opd::mm(in({}, {0, 2}), in({1, 2, 3, 4, 5, 6}, {2, 3}, kDouble));
  EXPECT_EQ(empty.scalar_type(), kFloat);
  EXPECT_EQ(sizes(empty), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::mm(in({1, 2}, {2, 1}), in({1, 2, 3}, {1, 3}, kDouble));
            }),
            "expected scalar type Float but found Double");
}

TEST_P(LinalgOps, MmOfBoolIsARuntimeErrorNamingOpAndDtype) {
  std::string msg = error_of_type<Error>([&] {
    opd::mm(in({1, 0, 0, 1}, {2, 2}, kBool), in({1, 1, 0, 1}, {2, 2}, kBool));
  });
  EXPECT_THAT(msg, ::testing::HasSubstr("mm"));
  EXPECT_THAT(msg, ::testing::HasSubstr("Bool"));
}

// ---- bmm ----------------------------------------------------------------------------------------

TEST_P(LinalgOps, BmmMultipliesEachBatch) {
  Mat a0 = sample(2, 3, 1), a1 = sample(2, 3, 2), b0 = sample(3, 4, 3), b1 = sample(3, 4, 4);
  std::vector<double> expected = join({naive_mm(a0, b0), naive_mm(a1, b1)});
  Tensor a = in(join({a0, a1}), {2, 2, 3}), b = in(join({b0, b1}), {2, 3, 4});
  EXPECT_TRUE(tensors_equal(opd::bmm(a, b), ex(expected, {2, 2, 4})));
  EXPECT_TRUE(tensors_equal(a.to(kDouble).bmm(b.to(kDouble)), ex(expected, {2, 2, 4}, kDouble)));
  EXPECT_EQ(strides(opd::bmm(a, b)), (std::vector<int64_t>{8, 4, 1}));

  // Transposed batches: a stored as [2, 3, 2] and viewed as [2, 2, 3].
  Tensor at = in(join({transposed(a0), transposed(a1)}), {2, 3, 2}).transpose(1, 2);
  EXPECT_TRUE(tensors_equal(opd::bmm(at, b), ex(expected, {2, 2, 4})));
}

TEST_P(LinalgOps, BmmInt64) {
  Mat a0 = sample(2, 2, 1), a1 = sample(2, 2, 2), b0 = sample(2, 3, 3), b1 = sample(2, 3, 4);
  for (Mat* m : {&a0, &a1, &b0, &b1})
    for (double& v : m->v) v *= 2;
  EXPECT_TRUE(tensors_equal(
      opd::bmm(in(join({a0, a1}), {2, 2, 2}, kLong), in(join({b0, b1}), {2, 2, 3}, kLong)),
      ex(join({naive_mm(a0, b0), naive_mm(a1, b1)}), {2, 2, 3}, kLong)));
}

TEST_P(LinalgOps, BmmErrors) {
  auto ones = [&](std::vector<int64_t> s, ScalarType dt = kFloat) {
    return opd::ones(s, TensorOptions().dtype(dt).device(GetParam()));
  };
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::bmm(ones({2, 3}), ones({3, 3, 2}));
            }),
            "batch1 must be a 3D tensor");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::bmm(ones({2, 2, 3}), ones({3, 2}));
            }),
            "batch2 must be a 3D tensor");
  EXPECT_EQ(
      error_of_type<Error>([&] {
        opd::bmm(ones({2, 2, 3}), ones({2, 4, 2}));
      }),
      "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
  EXPECT_EQ(
      error_of_type<Error>([&] {
        opd::bmm(ones({2, 2, 3}), ones({3, 3, 2}));
      }),
      "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3].");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::bmm(ones({2, 2, 2}), ones({2, 2, 2}, kDouble));
            }),
            "expected scalar type Float but found Double");
}

// ---- addmm --------------------------------------------------------------------------------------

TEST_P(LinalgOps, AddmmScalesAndBroadcastsSelf) {
  Mat a = sample(2, 3, 1), b = sample(3, 2, 2);
  Mat p = naive_mm(a, b);
  Mat s{2, 2, {1, -2, 3.5, 4}};
  auto combine = [&](auto self_at, double beta, double alpha) {
    std::vector<double> r(4);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) r[i * 2 + j] = beta * self_at(i, j) + alpha * p.at(i, j);
    return r;
  };
  auto full = [&](int64_t i, int64_t j) { return s.at(i, j); };
  EXPECT_TRUE(tensors_equal(opd::addmm(in(s), in(a), in(b)), ex(combine(full, 1, 1), {2, 2})));
  EXPECT_TRUE(tensors_equal(in(s).addmm(in(a), in(b), 0.5, 2), ex(combine(full, 0.5, 2), {2, 2})));
  EXPECT_TRUE(tensors_equal(opd::addmm(in(s, kDouble), in(a, kDouble), in(b, kDouble), -1, 3),
                            ex(combine(full, -1, 3), {2, 2}, kDouble)));

  // self broadcast from [2] (a row), [2, 1] (a column) and [] (a number).
  Tensor row = in({10, 20}, {2});
  EXPECT_TRUE(
      tensors_equal(opd::addmm(row, in(a), in(b)),
                    ex(combine([](int64_t, int64_t j) { return 10.0 * (j + 1); }, 1, 1), {2, 2})));
  EXPECT_EQ(strides(opd::addmm(row, in(a), in(b))), (std::vector<int64_t>{2, 1}));
  Tensor col = in({10, 20}, {2, 1});
  EXPECT_TRUE(
      tensors_equal(opd::addmm(col, in(a), in(b), 2, 1),
                    ex(combine([](int64_t i, int64_t) { return 10.0 * (i + 1); }, 2, 1), {2, 2})));
  Tensor num = in({7}, {});
  EXPECT_TRUE(tensors_equal(opd::addmm(num, in(a), in(b)),
                            ex(combine([](int64_t, int64_t) { return 7.0; }, 1, 1), {2, 2})));
}

TEST_P(LinalgOps, AddmmWithBetaZeroIgnoresSelf) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor self = in({nan, 1, 1, std::numeric_limits<double>::infinity()}, {2, 2});
  Tensor eye = in({1, 0, 0, 1}, {2, 2});
  EXPECT_TRUE(tensors_equal(opd::addmm(self, eye, eye, 0, 1), ex({1, 0, 0, 1}, {2, 2})));
}

TEST_P(LinalgOps, AddmmInt64AndEmptyInnerDim) {
  Tensor r = opd::addmm(in({1, 2, 3, 4}, {2, 2}, kLong), in({1, 2, 3, 4}, {2, 2}, kLong),
                        in({5, 6, 7, 8}, {2, 2}, kLong), 2, 3);
  // [[1,2],[3,4]] @ [[5,6],[7,8]] = [[19,22],[43,50]]
  EXPECT_TRUE(tensors_equal(r, ex({2 + 57, 4 + 66, 6 + 129, 8 + 150}, {2, 2}, kLong)));
  Tensor k0 =
      opd::addmm(in({1, 2, 3, 4}, {2, 2}), opd::empty({2, 0}, TensorOptions().device(GetParam())),
                 opd::empty({0, 2}, TensorOptions().device(GetParam())), 3, 1);
  EXPECT_TRUE(tensors_equal(k0, ex({3, 6, 9, 12}, {2, 2})));
}

TEST_P(LinalgOps, AddmmErrors) {
  auto ones = [&](std::vector<int64_t> s, ScalarType dt = kFloat) {
    return opd::ones(s, TensorOptions().dtype(dt).device(GetParam()));
  };
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::addmm(ones({2, 2}), ones({2, 3}), ones({2, 2}));
            }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x2)");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::addmm(ones({3, 3}), ones({2, 2}), ones({2, 2}));
            }),
            "The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
            "dimension 1.  Target sizes: [2, 2].  Tensor sizes: [3, 3]");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::addmm(ones({2, 2}), ones({2, 2}), ones({2, 2}, kDouble));
            }),
            "self and mat2 must have the same dtype");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::addmm(ones({2, 2}, kDouble), ones({2, 2}), ones({2, 2}));
            }),
            "self and mat2 must have the same dtype");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::addmm(ones({2, 2}), ones({2, 2}, kDouble), ones({2, 2}));
            }),
            "mat1 and mat2 must have the same dtype");
}

// ---- matmul -------------------------------------------------------------------------------------

TEST_P(LinalgOps, MatmulVectorCases) {
  Tensor v3 = in({1, 2, 3}, {3});
  Tensor m23 = in({1, 2, 3, 4, 5, 6}, {2, 3});
  // 1D . 1D: a 0-dim dot product.
  EXPECT_TRUE(tensors_equal(opd::matmul(v3, in({4, 5, 6}, {3})), ex({32}, {})));
  // 2D . 1D: a matrix-vector product.
  EXPECT_TRUE(tensors_equal(opd::matmul(m23, in({1, 0, -1}, {3})), ex({-2, -2}, {2})));
  // 1D . 2D: the vector as a row.
  EXPECT_TRUE(tensors_equal(opd::matmul(in({1, -1}, {2}), m23), ex({-3, -3, -3}, {3})));
  EXPECT_TRUE(tensors_equal(v3.to(kLong).matmul(in({4, 5, 6}, {3}, kLong)), ex({32}, {}, kLong)));
}

TEST_P(LinalgOps, MatmulMatrixAndBatchedCases) {
  Mat a = sample(2, 3, 1), b = sample(3, 2, 2), a1 = sample(2, 3, 3), b1 = sample(3, 2, 4);
  // 2D . 2D
  EXPECT_TRUE(tensors_equal(opd::matmul(in(a), in(b)), ex(naive_mm(a, b))));
  // 3D . 2D: the matrix is shared by every batch.
  Tensor batch_a = in(join({a, a1}), {2, 2, 3});
  EXPECT_TRUE(tensors_equal(opd::matmul(batch_a, in(b)),
                            ex(join({naive_mm(a, b), naive_mm(a1, b)}), {2, 2, 2})));
  // 2D . 3D
  Tensor batch_b = in(join({b, b1}), {2, 3, 2});
  EXPECT_TRUE(tensors_equal(opd::matmul(in(a), batch_b),
                            ex(join({naive_mm(a, b), naive_mm(a, b1)}), {2, 2, 2})));
  // 3D . 3D
  EXPECT_TRUE(tensors_equal(opd::matmul(batch_a, batch_b),
                            ex(join({naive_mm(a, b), naive_mm(a1, b1)}), {2, 2, 2})));
  // 1D . 3D and 3D . 1D: the vector's dimension is added and removed again.
  Mat row{1, 3, {1, 0, -1}}, colv{3, 1, {1, 0, -1}};
  EXPECT_TRUE(tensors_equal(opd::matmul(in(row.v, {3}), batch_b),
                            ex(join({naive_mm(row, b), naive_mm(row, b1)}), {2, 2})));
  EXPECT_TRUE(tensors_equal(opd::matmul(batch_a, in(colv.v, {3})),
                            ex(join({naive_mm(a, colv), naive_mm(a1, colv)}), {2, 2})));
}

TEST_P(LinalgOps, MatmulBroadcastsBatchDims) {
  // [2, 1, 2, 3] . [3, 3, 2] -> [2, 3, 2, 2]: out[i][j] = A[i][0] . B[j].
  std::vector<Mat> as = {sample(2, 3, 1), sample(2, 3, 2)};
  std::vector<Mat> bs = {sample(3, 2, 3), sample(3, 2, 4), sample(3, 2, 5)};
  std::vector<Mat> out;
  for (const Mat& x : as)
    for (const Mat& y : bs) out.push_back(naive_mm(x, y));
  Tensor r = opd::matmul(in(join(as), {2, 1, 2, 3}), in(join(bs), {3, 3, 2}));
  EXPECT_TRUE(tensors_equal(r, ex(join(out), {2, 3, 2, 2})));
  EXPECT_EQ(strides(r), (std::vector<int64_t>{12, 4, 2, 1}));
}

TEST_P(LinalgOps, MatmulErrors) {
  auto ones = [&](std::vector<int64_t> s) {
    return opd::ones(s, TensorOptions().device(GetParam()));
  };
  EXPECT_EQ(error_of_type<Error>([&] { opd::matmul(ones({}), ones({4})); }),
            "both arguments to matmul need to be at least 1D, but they are 0D and 1D");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::matmul(ones({2, 3}), ones({4, 5}));
            }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  EXPECT_EQ(
      error_of_type<Error>([&] {
        opd::matmul(ones({2, 2, 3}), ones({3, 3, 2}));
      }),
      "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  EXPECT_EQ(error_of_type<Error>([&] { opd::matmul(ones({3}), ones({4})); }),
            "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
            "elements, but got 3 and 4 elements respectively");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::matmul(ones({2, 3}), ones({4}));
            }),
            "size mismatch, got 2, 2x3,4");
}

// ---- linear -------------------------------------------------------------------------------------

TEST_P(LinalgOps, LinearWithAndWithoutBias) {
  Mat x = sample(2, 3, 1), w = sample(4, 3, 2);
  Mat xw = naive_mm(x, transposed(w));
  std::vector<double> bias = {1, -1, 0.5, 2};
  std::vector<double> with_bias = xw.v;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j) with_bias[i * 4 + j] += bias[j];
  EXPECT_TRUE(tensors_equal(opd::linear(in(x), in(w)), ex(xw)));
  EXPECT_TRUE(tensors_equal(opd::linear(in(x), in(w), in(bias, {4})), ex(with_bias, {2, 4})));
  EXPECT_TRUE(tensors_equal(opd::linear(in(x, kDouble), in(w, kDouble), in(bias, {4}, kDouble)),
                            ex(with_bias, {2, 4}, kDouble)));

  // A 3D input applies the same map to every row; a 1D input gives a 1D output.
  Mat x1 = sample(2, 3, 3);
  Mat x1w = naive_mm(x1, transposed(w));
  EXPECT_TRUE(tensors_equal(opd::linear(in(join({x, x1}), {2, 2, 3}), in(w)),
                            ex(join({xw, x1w}), {2, 2, 4})));
  Mat first_row{1, 3, {x.v[0], x.v[1], x.v[2]}};
  Mat r = naive_mm(first_row, transposed(w));
  for (int64_t j = 0; j < 4; ++j) r.v[j] += bias[j];
  EXPECT_TRUE(tensors_equal(opd::linear(in(first_row.v, {3}), in(w), in(bias, {4})), ex(r.v, {4})));
}

TEST_P(LinalgOps, LinearShapeErrors) {
  auto ones = [&](std::vector<int64_t> s) {
    return opd::ones(s, TensorOptions().device(GetParam()));
  };
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::linear(ones({2, 3}), ones({4, 5}));
            }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)");
  EXPECT_EQ(error_of_type<Error>([&] {
              opd::linear(ones({2, 3}), ones({4, 3}), ones({3}));
            }),
            "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
            "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]");
}

// ---- complex ------------------------------------------------------------------------------------

// a (m x k) times b (k x n) of complex row-major values, by the definition.
std::vector<Complex> naive_complex_mm(const std::vector<Complex>& a, const std::vector<Complex>& b,
                                      int64_t m, int64_t k, int64_t n) {
  std::vector<Complex> c(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

TEST_P(LinalgOps, ComplexProductsMatchTheDefinition) {
  const Device d = GetParam();
  const std::vector<Complex> a = {{1, 2}, {0, -1}, {3, 0}, {-2, 1}, {1, 1}, {0, 2}};   // 2 x 3
  const std::vector<Complex> b = {{2, 0}, {1, -1}, {0, 1}, {3, 2}, {-1, -1}, {2, 0}};  // 3 x 2
  const std::vector<Complex> ab = naive_complex_mm(a, b, 2, 3, 2);
  for (ScalarType dt : {kComplexFloat, kComplexDouble}) {
    Tensor ta = complex_tensor(a, {2, 3}, dt, d), tb = complex_tensor(b, {3, 2}, dt, d);
    EXPECT_TRUE(tensors_equal(opd::mm(ta, tb), complex_tensor(ab, {2, 2}, dt))) << to_string(dt);
    // A transposed operand is read transposed, not conjugated.
    std::vector<Complex> b_transposed(6);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j) b_transposed[j * 3 + i] = b[i * 2 + j];
    Tensor stored_t = complex_tensor(b_transposed, {2, 3}, dt, d).t();
    EXPECT_TRUE(tensors_equal(opd::mm(ta, stored_t), complex_tensor(ab, {2, 2}, dt)));
    // bmm: the same product twice, the second batch scaled by i.
    std::vector<Complex> a2 = a;
    for (const Complex& v : a) a2.push_back(v * Complex(0, 1));
    std::vector<Complex> b2 = b;
    b2.insert(b2.end(), b.begin(), b.end());
    std::vector<Complex> ab2 = ab;
    for (const Complex& v : ab) ab2.push_back(v * Complex(0, 1));
    EXPECT_TRUE(tensors_equal(
        opd::bmm(complex_tensor(a2, {2, 2, 3}, dt, d), complex_tensor(b2, {2, 3, 2}, dt, d)),
        complex_tensor(ab2, {2, 2, 2}, dt)));
    // addmm with complex beta and alpha, self broadcast from a row.
    const Complex beta(0, 1), alpha(2, -1);
    const std::vector<Complex> row = {{1, 1}, {-1, 2}};
    std::vector<Complex> expected(4);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) expected[i * 2 + j] = beta * row[j] + alpha * ab[i * 2 + j];
    EXPECT_TRUE(tensors_equal(
        opd::addmm(complex_tensor(row, {2}, dt, d), ta, tb, Scalar(beta), Scalar(alpha)),
        complex_tensor(expected, {2, 2}, dt)));
    // An empty inner dimension leaves beta * self.
    Tensor no_k_a = complex_tensor({}, {2, 0}, dt, d), no_k_b = complex_tensor({}, {0, 2}, dt, d);
    std::vector<Complex> scaled = {beta * row[0], beta * row[1], beta * row[0], beta * row[1]};
    EXPECT_TRUE(tensors_equal(
        opd::addmm(complex_tensor(row, {2}, dt, d), no_k_a, no_k_b, Scalar(beta), Scalar(alpha)),
        complex_tensor(scaled, {2, 2}, dt)));
  }
}

// _pdist_backward and _cdist_backward read grad and the distances one value per distance, as
// self's type: a smaller or other-typed grad was read past its end (a crash the Meta-vs-CPU test
// found); now refused on CPU and Meta alike.
TEST_P(LinalgOps, DistanceBackwardsRefuseGradOfTheWrongSizeOrDtype) {
  Tensor self = in(sample(3, 2, 1));
  Tensor three = in({1, 2, 3}, {3});
  EXPECT_EQ(error_of_type<Error>([&] { opd::_pdist_backward(in({1}, {1}), self, 2.0, three); }),
            "_pdist_backward: expected grad and pdist of 3 elements (one per pair of 3 rows), got "
            "1 and 3");
  EXPECT_EQ(error_of_type<TypeError>([&] {
              opd::_pdist_backward(three, self, 2.0, in({1, 2, 3}, {3}, kDouble));
            }),
            "expected scalar type Float but found Double");
  Tensor x1 = in(sample(2, 2, 1)), x2 = in(sample(3, 2, 2));
  Tensor six = in({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of_type<Error>([&] { opd::_cdist_backward(in({1}, {1}), x1, x2, 1.0, six); }),
            "_cdist_backward: expected grad and cdist of 6 elements (the distances), got 1 and 6");
  EXPECT_EQ(sizes(opd::_cdist_backward(six, x1, x2, 1.0, six)), (std::vector<int64_t>{2, 2}));
}

INSTANTIATE_TEST_SUITE_P(Devices, LinalgOps, ::testing::ValuesIn(op_test_devices()),
                         [](const auto& info) {
                           std::string name = info.param.str();
                           for (char& c : name)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace opd::test
