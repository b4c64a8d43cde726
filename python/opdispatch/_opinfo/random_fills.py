"""Table entries for the random fills and their functional forms (helper "random", session 4):
uniform_, normal_, random_ (three overloads), bernoulli_ (two), exponential_, geometric_,
log_normal_, cauchy_, bernoulli, bernoulli.p, normal's tensor overloads and multinomial. Their values come
from another generator than torch's, so the entries are nondeterministic: the table compares
dtypes, shapes, Meta against CPU, the out= rules and the errors; tests/python/test_random.py
tests the values (reproducibility, ranges, moments). The generator overloads of the factories
take a Generator object, which a sample cannot hand to both libraries: test_random.py too."""

from .core import ErrorInput, OpInfo, SampleInput, method_op, dtypes as D

FLOATING = D.floating
# bernoulli_'s self: every type but float16 (torch 1.13's CPU kernel has no Half).
BERNOULLI_SELF = ("float32", "float64", "bfloat16") + D.integral + ("bool",)


def _fill_samples(*argsets):
    def samples(op, make, dtype, rg):
        for args in argsets:
            yield SampleInput(make((3, 4)), args=args, name=f"{args}")
        yield SampleInput(make((4, 3), noncontiguous=True), args=argsets[0], name="strided")
        yield SampleInput(make(()), args=argsets[0], name="0-d")
        yield SampleInput(make((0, 2)), args=argsets[0], name="empty")
    return samples


def errors_uniform(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(2, 1)), RuntimeError,
                     r"uniform_ expects to return a \[from, to\) range, but found from=2 > to=1")
    yield ErrorInput(SampleInput(make((3,)), args=(-3e38, 3e38)), RuntimeError,
                     r"uniform_ expects to-from <= std::numeric_limits<Float>::max\(\)")


def errors_normal(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(0, -1)), RuntimeError,
                     r"normal expects std >= 0.0, but found std -1")


def errors_random_from(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(3, 2)), RuntimeError,
                     r"random_ expects 'from' to be less than 'to', but got from=3 >= to=2")


def errors_exponential(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(-1,)), RuntimeError,
                     r"exponential_ expects lambda >= 0.0, but found lambda=-1")


def errors_geometric(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(0,)), RuntimeError,
                     r"geometric_ expects p to be in \(0, 1\), but got p=0")


def errors_log_normal(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(0, -1)), RuntimeError,
                     r"log_normal_ expects std > 0.0, but found std=-1")


def errors_bernoulli_float(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(1.5,)), RuntimeError,
                     r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5")


def sample_bernoulli_tensor(op, make, dtype, rg):
    yield SampleInput(make((3, 4)), args=(make((3, 4), dtype_override="float32", low=0, high=1),),
                      name="same shape")
    yield SampleInput(make((3, 4)), args=(make((4,), dtype_override="float64", low=0, high=1),),
                      name="broadcast p")
    yield SampleInput(make((4, 3), noncontiguous=True),
                      args=(make((), dtype_override="bfloat16", low=0, high=1),), name="0-d p")


def errors_bernoulli_tensor(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(make((4,), low=0, high=1),)), RuntimeError,
                     r"The expanded size of the tensor \(3\) must match the existing size \(4\)")
    yield ErrorInput(SampleInput(make((3,)), args=(make((3,), dtype_override="int64", low=0, high=1),)),
                     RuntimeError, r"\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'")


def sample_probabilities(op, make, dtype, rg):
    yield SampleInput(make((3, 4), low=0, high=1), name="matrix")
    yield SampleInput(make((4, 3), low=0, high=1, noncontiguous=True), name="strided")
    yield SampleInput(make((), low=0, high=1), name="0-d")
    yield SampleInput(make((0, 3)), name="empty")


def sample_bernoulli_p(op, make, dtype, rg):
    yield SampleInput(make((3, 4)), args=(0.25,), name="matrix")
    yield SampleInput(make((0,)), args=(1.0,), name="empty")


def sample_normal_tensor_float(op, make, dtype, rg):
    yield SampleInput(make((3, 4)), args=(2.0,), name="matrix")
    yield SampleInput(make((4, 3), noncontiguous=True), name="strided, std=1")
    yield SampleInput(make(()), args=(0.5,), name="0-d")


def sample_normal_float_tensor(op, make, dtype, rg):
    yield SampleInput(1.5, args=(make((3, 4), low=0, high=2),), name="matrix")
    yield SampleInput(-1.0, args=(make((4, 3), low=0, high=2, noncontiguous=True),),
                      name="strided")


def sample_normal_tensor_tensor(op, make, dtype, rg):
    yield SampleInput(make((3, 4)), args=(make((3, 4), low=0, high=2),), name="same shape")
    yield SampleInput(make((3, 1)), args=(make((1, 4), low=0, high=2),), name="broadcast")


def errors_normal_tensors(op, make):
    yield ErrorInput(SampleInput(make((3,)), args=(-1.0,)), RuntimeError,
                     r"normal expects std >= 0.0, but found std -1")


def sample_multinomial(op, make, dtype, rg):
    yield SampleInput(make((5,), low=0.1, high=1), args=(3,), name="1-d")
    yield SampleInput(make((4, 6), low=0.1, high=1, noncontiguous=True), args=(8, True),
                      name="2-d, replacement")
    yield SampleInput(make((0, 3), low=0.1, high=1), args=(2,), name="no rows")


def errors_multinomial(op, make):
    yield ErrorInput(SampleInput(make((2,), low=0.1, high=1), args=(5,)), RuntimeError,
                     r"cannot sample n_sample > prob_dist.size\(-1\) samples without replacement")
    yield ErrorInput(SampleInput(make((2, 2, 2), low=0.1, high=1), args=(1,)), RuntimeError,
                     r"prob_dist must be 1 or 2 dim")
    yield ErrorInput(SampleInput(make((3,), low=-1, high=-0.5), args=(1,)), RuntimeError,
                     r"probability tensor contains either `inf`, `nan` or element < 0",
                     on_meta=False)


def _fill(name, entry, dtypes, samples, errors=None):
    return OpInfo(entry, op=method_op(name), method=False, dtypes=dtypes,
                  sample_inputs=samples, error_inputs=errors, nondeterministic=True,
                  supports_out=False, supports_autograd=False)


OP_DB = [
    _fill("uniform_", "uniform_", FLOATING + D.complex, _fill_samples((), (-2.0, 3.0)),
          errors_uniform),
    _fill("normal_", "normal_", FLOATING + D.complex, _fill_samples((), (1.0, 0.5)),
          errors_normal),
    _fill("random_", "random_", D.all_and_bool, _fill_samples(())),
    _fill("random_", "random_.to", D.all, _fill_samples((50,))),
    _fill("random_", "random_.from", D.all, _fill_samples((0, 10), (2, None))),
    _fill("exponential_", "exponential_", FLOATING, _fill_samples((), (3.0,)),
          errors_exponential),
    _fill("geometric_", "geometric_", D.all, _fill_samples((0.3,)), errors_geometric),
    _fill("log_normal_", "log_normal_", FLOATING, _fill_samples((), (0.0, 0.5)),
          errors_log_normal),
    _fill("cauchy_", "cauchy_", FLOATING, _fill_samples((), (1.0, 2.0))),
    _fill("bernoulli_", "bernoulli_.float", BERNOULLI_SELF, _fill_samples((), (0.25,)),
          errors_bernoulli_float),
    _fill("bernoulli_", "bernoulli_.Tensor", BERNOULLI_SELF, sample_bernoulli_tensor,
          errors_bernoulli_tensor),
    OpInfo("bernoulli", dtypes=("float32", "float64", "bfloat16"),
           sample_inputs=sample_probabilities, nondeterministic=True, supports_out=True,
           supports_autograd=False),
    OpInfo("bernoulli.p", dtypes=BERNOULLI_SELF, sample_inputs=sample_bernoulli_p,
           nondeterministic=True, supports_out=False, supports_autograd=False),
    # torch 1.13 has no Meta kernel for multinomial; ours checks the arguments (the Meta check
    # compares with our CPU).
    OpInfo("multinomial", dtypes=("float32", "float64", "bfloat16"),
           sample_inputs=sample_multinomial, error_inputs=errors_multinomial,
           nondeterministic=True, supports_out=True, supports_autograd=False),
    OpInfo("normal.Tensor_float", method=False, dtypes=FLOATING + D.complex,
           sample_inputs=sample_normal_tensor_float, error_inputs=errors_normal_tensors,
           nondeterministic=True, supports_out=True, supports_autograd=False,
           skips={"out": "torch 1.13's normal.Tensor_float_out broadcasts mean with out's own "
                         "shape: an empty or a wrong-shaped out raises (test_random.py checks "
                         "that we do as torch)"}),
    OpInfo("normal.float_Tensor", method=False, dtypes=FLOATING,
           sample_inputs=sample_normal_float_tensor, nondeterministic=True, supports_out=True,
           supports_autograd=False),
    OpInfo("normal.Tensor_Tensor", method=False, dtypes=FLOATING,
           sample_inputs=sample_normal_tensor_tensor, nondeterministic=True, supports_out=True,
           supports_autograd=False),
]
