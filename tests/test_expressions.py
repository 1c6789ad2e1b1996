"""Safe expressions for conditions and keys: useful over the data, and unable to do harm."""

import pytest

import gobpm_nb as bpm
from gobpm_nb.model.expr import Expr

DATA = {"amount": 120, "status": "ok", "items": [1, 2, 3], "vip": False,
        "customer": {"tier": "gold"}}


def test_field_name_reads_the_field():
    """A bare field name evaluates to that field's value."""
    e = Expr("amount")
    assert e.field == "amount"
    assert e(DATA) == 120
    assert Expr("amount > 1").field is None


@pytest.mark.parametrize("source, expected", [
    ("amount > 100", True),
    ("amount <= 100", False),
    ("status == 'ok'", True),
    ("status != 'ok'", False),
    ("100 < amount < 200", True),
    ("customer['tier'] == 'gold'", True),
    ("status in ('ok', 'done')", True),
])
def test_comparisons(source, expected):
    """Comparisons over fields give the expected truth value."""
    assert Expr(source)(DATA) is expected


@pytest.mark.parametrize("source, expected", [
    ("amount > 100 and status == 'ok'", True),
    ("amount > 500 or vip", False),
    ("not vip", True),
    ("vip or (amount > 100 and not status == 'bad')", True),
])
def test_boolean_logic(source, expected):
    """and / or / not combine conditions as in Python."""
    assert Expr(source)(DATA) is expected


def test_len_and_a_few_builtins():
    """len(...) and a few harmless builtins are available."""
    assert Expr("len(items)")(DATA) == 3
    assert Expr("len(items) >= 2 and max(items) == 3")(DATA) is True
    assert Expr("str(amount) + '!'")(DATA) == "120!"


def test_keywords_are_literals_not_fields():
    """True, False and None mean themselves, not data fields of those names."""
    assert Expr("True")({}) is True
    assert Expr("False")({}) is False
    assert Expr("None")({}) is None
    assert Expr("True").field is None


def test_callable_gets_a_copy_of_the_data():
    """A callable condition may scribble on its argument without changing the instance data."""
    data = {"amount": 1, "items": [1], "nested": {"k": "v"}}

    def meddle(d):
        d["amount"] = 99
        d["items"].append(2)
        d["nested"]["k"] = "changed"
        return d["amount"] > 50

    assert Expr(meddle)(data) is True
    assert data == {"amount": 1, "items": [1], "nested": {"k": "v"}}


def test_string_expression_cannot_change_the_data():
    """Method calls inside a string expression act on a copy, never on the instance data."""
    data = {"items": [1, 2], "d": {"a": 1}}
    Expr("items.append(3)")(data)
    Expr("d.clear()")(data)
    assert data == {"items": [1, 2], "d": {"a": 1}}


@pytest.mark.parametrize("source", [
    "__import__('os')",
    "__import__('os').system('echo pwned')",
    "().__class__",
    "().__class__.__bases__[0].__subclasses__()",
    "items.__class__",
    "open('/etc/passwd')",
    "getattr(items, 'append')",
    "eval('1')",
])
def test_unsafe_expressions_are_refused(source):
    """Imports, dunder attributes and unknown functions raise ModelError naming the source."""
    with pytest.raises(bpm.ModelError) as info:
        Expr(source)(DATA)
    assert repr(source) in str(info.value)


def test_refused_expressions_never_run(tmp_path):
    """A refused expression has no side effect: the file it would create never appears."""
    target = tmp_path / "pwned"
    for source in (f"open({str(target)!r}, 'w')",
                   f"__import__('os').system('touch {target}')",
                   f"__import__('pathlib').Path({str(target)!r}).touch()"):
        with pytest.raises(bpm.ModelError):
            Expr(source)({})
    assert not target.exists()


def test_format_string_escape_is_refused_when_run():
    """A str.format attack on the data is refused by the evaluator, not executed."""
    from simpleeval import InvalidExpression

    with pytest.raises(InvalidExpression):
        Expr("'{0.__class__}'.format(status)")(DATA)


@pytest.mark.parametrize("source", ["amount >", "(", "a b", "x = 1", ""])
def test_syntax_error_raises_model_error_naming_the_source(source):
    """A string that does not parse raises ModelError naming it."""
    with pytest.raises(bpm.ModelError, match="does not parse") as info:
        Expr(source)
    assert repr(source) in str(info.value)


def test_neither_string_nor_callable_is_refused():
    """A condition that is neither a string nor a callable raises ModelError."""
    with pytest.raises(bpm.ModelError, match="42"):
        Expr(42)


def test_missing_field_raises_key_error_naming_it():
    """Reading a field the data lacks raises KeyError naming the field."""
    with pytest.raises(KeyError) as info:
        Expr("amount")({})
    assert info.value.args == ("amount",)
    with pytest.raises(KeyError) as info:
        Expr("total > 100 and amount > 1")({"amount": 5})
    assert info.value.args == ("total",)


def test_describe_names_the_source_or_the_function():
    """describe() gives the source text, or a callable's module and name."""
    def big(d):
        return d["amount"] > 100

    assert Expr("amount > 1").describe() == "amount > 1"
    assert Expr(big).describe() == f"<fn {__name__}.{big.__qualname__}>"
    assert Expr(big)(DATA) is True


@pytest.mark.parametrize("source", ["not " * 1000 + "a", "-" * 1000 + "1",
                                    "not " * 100_000 + "a"],
                         ids=["1,000 nots", "1,000 minus signs", "100,000 nots"])
def test_a_deeply_nested_python_condition_is_refused_when_built_not_when_run(source):
    """A condition nested deeper than the evaluator can walk: ModelError naming the limit
    from validate() (it used to validate, then fail the instance with RecursionError when
    evaluated, or raise MemoryError from the builder)."""
    p = bpm.Process("deep")
    p.start("s")
    p.exclusive_gateway("g")
    p.end("e1")
    p.end("e2")
    p.flow("s", "g")
    p.flow("g", "e1", condition=source)
    p.flow("g", "e2")
    with pytest.raises(bpm.ModelError, match="nests deeper than 100 levels"):
        p.validate()
