"""Beam's introspection, memoized during a job (pipelines/runner/beam_introspection.py), answers what Beam answers, and
Beam is as shipped outside the block. The job's outputs staying byte-identical is the end-to-end tests' part."""

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions, TypeOptions
from apache_beam.transforms import core, userstate
from apache_beam.transforms.userstate import BagStateSpec, is_stateful_dofn

from skewless.pipelines.runner import beam_introspection


class _Stateful(beam.DoFn):
    BAG = BagStateSpec("bag", beam.coders.VarIntCoder())

    def process(self, element, bag=beam.DoFn.StateParam(BAG)):
        yield element


class _Plain(beam.DoFn):
    def process(self, element, scale=2, *rest, flag=True):
        yield element * scale


def _free(a, b=3, *, c=4):
    return a + b + c


def test_signatures_are_beams_own_answers_and_copies():
    original = core.get_function_args_defaults
    callables = [_free, _Plain().process, _Stateful().process, lambda x, y=1: x, len, str.upper]
    expected = [original(f) for f in callables]
    with beam_introspection.memoized():
        assert core.get_function_args_defaults is not original
        for _ in range(2):  # the second round is answered from the memo
            assert [core.get_function_args_defaults(f) for f in callables] == expected
        args, defaults = core.get_function_args_defaults(_free)
        args.append("changed")
        defaults.clear()
        assert core.get_function_args_defaults(_free) == original(_free)
        assert is_stateful_dofn(_Stateful()) and not is_stateful_dofn(_Plain())
        assert userstate.get_dofn_specs(_Stateful())[0] == {_Stateful.BAG}
    assert core.get_function_args_defaults is original


def test_a_function_changed_in_place_is_not_what_a_memo_keys_on_by_accident():
    # two distinct functions with the same name and code location get their own entries
    def make(default):
        def f(x, y=default):
            return x
        return f

    with beam_introspection.memoized():
        assert core.get_function_args_defaults(make(1)) == (["x", "y"], [1])
        assert core.get_function_args_defaults(make(2)) == (["x", "y"], [2])


def test_options_views_match_and_follow_their_flags():
    view_as = PipelineOptions.view_as
    options = PipelineOptions(["--runner=DirectRunner", "--pipeline_type_check"], job_name="j")
    with beam_introspection.memoized():
        first = options.view_as(TypeOptions)
        assert options.view_as(TypeOptions) is first  # remembered
        assert first.pipeline_type_check is True and options.view_as(StandardOptions).runner == "DirectRunner"
        first.pipeline_type_check = False  # views share their options: a change shows in every view
        assert options.view_as(TypeOptions).pipeline_type_check is False
        options._flags = ["--runner=PrismRunner"]  # other flags: a new view, parsed from them
        assert options.view_as(TypeOptions) is not first
        assert PipelineOptions(["--runner=PrismRunner"]).view_as(StandardOptions).runner == "PrismRunner"
    assert PipelineOptions.view_as is view_as


def test_nested_blocks_restore_beam_only_when_the_last_ends():
    original = core.get_function_args_defaults
    with beam_introspection.memoized():
        with beam_introspection.memoized():
            pass
        assert core.get_function_args_defaults is not original
    assert core.get_function_args_defaults is original


class _OtherState(beam.DoFn):
    BAG = BagStateSpec("other", beam.coders.VarIntCoder())

    def process(self, element, other=beam.DoFn.StateParam(BAG)):
        yield element


class _Holder(beam.DoFn):
    """Holds a bound method of another DoFn: its specs are that method's, per instance."""

    def __init__(self, inner):
        super().__init__()
        self.inner_process = inner.process

    def process(self, element):
        yield element


class _Shadowing(beam.DoFn):
    """An instance whose `process` is a plain function, as `beam.Map`'s wrapper holds its function."""

    def __init__(self):
        super().__init__()
        self.process = lambda element: [element]


class _Dynamic(beam.DoFn):
    """A property of the user's own: it may answer per instance, so the class's answer is never reused."""

    def __init__(self, inner):
        super().__init__()
        self._inner = inner

    @property
    def delegate(self):
        return self._inner.process

    def process(self, element):
        yield element


def _specs_by_name(specs):
    state, timers = specs
    return sorted(spec.name for spec in state), sorted(spec.name for spec in timers)


def test_dofn_specs_are_beams_own_answers_per_instance():
    original = userstate.get_dofn_specs
    dofns = [_Plain(), _Stateful(), _Holder(_Stateful()), _Holder(_OtherState()), _Holder(_Plain()), _Shadowing(),
             _Dynamic(_Stateful()), _Dynamic(_Plain()), beam.Map(len).fn, beam.Map(_Plain().process).fn]
    expected = [_specs_by_name(original(dofn)) for dofn in dofns]
    # the cases a memo per class alone would answer wrongly
    assert expected[2] != expected[3] != expected[4] and expected[6] != expected[7]
    with beam_introspection.memoized():
        assert userstate.get_dofn_specs is not original
        for _ in range(2):  # the second round is answered from the memo where it can be
            assert [_specs_by_name(userstate.get_dofn_specs(dofn)) for dofn in dofns] == expected
        state, _ = userstate.get_dofn_specs(_Stateful())
        state.clear()  # a caller's change stays its own
        assert _specs_by_name(userstate.get_dofn_specs(_Stateful())) == (["bag"], [])
    assert userstate.get_dofn_specs is original
