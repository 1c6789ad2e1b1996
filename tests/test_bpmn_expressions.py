"""FEEL and JUEL conditions from files, translated to the safe evaluator's syntax — names,
literals, comparisons, and/or/not — and refused, naming the expression, when they use
anything else; never evaluated by Python."""

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

import gobpm_nb as bpm
from gobpm_nb.bpmn.expressions import dialect, to_feel, translate
from gobpm_nb.model.expr import Expr

FEEL = "https://www.omg.org/spec/DMN/20191111/FEEL/"
XPATH = "http://www.w3.org/1999/XPath"


@pytest.mark.parametrize("text, language, expected", [
    ("= amount > 100", None, "amount > 100"),
    ("=amount>100", None, "amount > 100"),
    ('=status = "new"', None, "status == 'new'"),
    ('=status != "new"', None, "status != 'new'"),
    ("=a <= 1 and b >= 2.5", None, "a <= 1 and b >= 2.5"),
    ("=a or b and c", None, "a or b and c"),
    ("=(a or b) and c", None, "(a or b) and c"),
    ("=not(approved)", None, "not approved"),
    ("=not(a = 1) or b", None, "not a == 1 or b"),
    ("=x = null", None, "x == None"),
    ("=flag = true", None, "flag == True"),
    ("=-5 < x", None, "-5 < x"),
    ('="a\\"b" = s', None, "'a\"b' == s"),
    ("amount > 100", FEEL, "amount > 100"),
    ("${amount > 100}", None, "amount > 100"),
    ("${approved}", None, "approved"),
    ("${!approved}", None, "not approved"),
    ("${a && b || !c}", None, "a and b or not c"),
    ("${a and not b or c}", None, "a and not b or c"),
    ("${clarified == 'yes'}", None, "clarified == 'yes'"),
    ('${name == "Bob"}', None, "name == 'Bob'"),
    ("${x eq 1 and y ne 2}", None, "x == 1 and y != 2"),
    ("${x lt 1 or x gt 9 or x le 0 or x ge 10}", None, "x < 1 or x > 9 or x <= 0 or x >= 10"),
    ("${!a == b}", None, "(not a) == b"),
    ("#{total > 5}", None, "total > 5"),
    ("${s == 'it\\'s'}", None, "s == \"it's\""),
    ("${x == null}", None, "x == None"),
    ("true", XPATH, "True"),
    ("amount > 100 && vip", None, "amount > 100 and vip"),
    ("status = 'new'", None, "status == 'new'"),
    ("x == None or y == True", None, "x == None or y == True"),
    ("len(items) > 2", "urn:gobpm-nb:safe-expression", "len(items) > 2"),
    ("${order.price <= 100}", None, "order['price'] <= 100"),
    ("${!loan.approved}", None, "not loan['approved']"),
    ("${orders[1].price > 1 && o['k'] == 2}", None, "orders[1]['price'] > 1 and o['k'] == 2"),
    ('=order.total > 5', None, "order['total'] > 5"),
])
def test_translation_table(text, language, expected):
    """Each condition translates to the safe evaluator's syntax shown."""
    assert translate(text, language) == expected


@pytest.mark.parametrize("text, language, why", [
    ("=sum(items) > 0", None, "it calls 'sum'"),
    ("=order.total() > 5", None, "it calls 'total' on 'order'"),
    ("=items[0] = 2", None, "it reads [0 from 'items'"),
    ("${items[-1] == 2}", None, "it reads [- from 'items'"),
    ("${order._secret}", None, "it reads ._secret from 'order'"),
    ("=a == 1", None, "FEEL compares with '=', not '=='"),
    ("=a && b", None, "FEEL writes 'and'"),
    ("=not a", None, "FEEL negates with the function not(...)"),
    ("='x' = s", None, "FEEL strings are in double quotes"),
    ("=a < b < c", None, "it chains comparisons"),
    ("=for x in xs return x", None, "it uses 'for', which is not a plain name"),
    ("=some x in xs satisfies x > 1", None, "it uses 'some'"),
    ("=Service Level = 1", None, "it has a name with spaces"),
    ("=(a or b", None, "a parenthesis is not closed"),
    ("=", None, "it is empty"),
    ("${a ? b : c}", None, "it uses a conditional ('? :')"),
    ("${a = 1}", None, "'=' alone is an assignment in JUEL"),
    ("${bean.check(x)}", None, "it calls 'check' on 'bean'"),
    ("${a % 2 == 0}", None, "it takes a remainder"),
    ("${a mod 2 == 0}", None, "it takes a remainder"),
    ("${variables:base64(v) == 'aA=='}", None, "it calls variables:base64"),
    ("${execution.getVariable(name) == 1}", None, "it calls 'getVariable' on 'execution'"),
    ("${task:get(x)}", None, "it calls a function of the prefix 'task'"),
    ("${empty items}", None, "it uses 'empty'"),
    ("Hello ${name}", None, "it mixes text and expressions"),
    ("${a} and ${b}", None, "it mixes text and expressions"),
    ("${__import__}", None, "it uses '__import__'"),
    ("${class == 1}", None, "it uses 'class'"),
    ("${a > }", None, "it ends too early"),
    ("Service Level == 'Premium'", None, "it has a name with spaces"),
    ("total > 5", "javascript", "is written in 'javascript'"),
    ("x > 1", "http://groovy-lang.org/", "is written in 'http://groovy-lang.org/'"),
    ("<fn m.f>", "urn:gobpm-nb:python-callable", "is a Python callable"),
])
def test_refusals_name_the_expression_and_why(text, language, why):
    """Anything beyond names, literals, comparisons and and/or/not is a ModelError naming
    the expression and the reason."""
    with pytest.raises(bpm.ModelError) as info:
        translate(text, language)
    assert why in str(info.value)
    assert repr(text.strip()) in str(info.value)


@pytest.mark.parametrize("text, language, kind", [
    ("=a", None, "feel"), ("a", FEEL, "feel"), ("${a}", None, "juel"),
    ("#{a}", None, "juel"), ("a", "http://camunda.org/juel", "juel"), ("a", None, "plain"),
    ("a", XPATH, "plain"), ("a", "urn:gobpm-nb:safe-expression", "safe"),
    ("a", "python", "other:python"),
])
def test_the_dialect_comes_from_the_marker_or_the_language(text, language, kind):
    """``=`` means FEEL, ``${``/``#{`` JUEL; otherwise the language attribute decides."""
    assert dialect(text, language) == kind


def test_a_translation_evaluates_like_the_original_on_data():
    """The translated condition, run by the safe evaluator, gives the answers FEEL would."""
    cond = Expr(translate('=amount > 100 and not(blocked) or tier = "gold"'))
    assert cond({"amount": 150, "blocked": False, "tier": "x"}) is True
    assert cond({"amount": 150, "blocked": True, "tier": "x"}) is False
    assert cond({"amount": 5, "blocked": True, "tier": "gold"}) is True


def test_a_file_condition_is_never_evaluated_by_python(tmp_path):
    """A condition that would run code if eval'd is refused, and nothing runs."""
    marker = tmp_path / "ran"
    text = f"${{__import__('pathlib').Path('{marker}').touch()}}"
    with pytest.raises(bpm.ModelError):
        translate(text)
    assert not marker.exists()


@pytest.mark.parametrize("source, feel", [
    ("amount > 100", "=amount > 100"),
    ("a == 'x' and not b", '=a = "x" and not(b)'),
    ("not (a == 1)", "=not(a = 1)"),
    ("(a or b) and c", "=(a or b) and c"),
    ("x == None or y != False", "=x = null or y != false"),
    ("a > -1.5", "=a > -1.5"),
    ("approved", "=approved"),
    ("len(x) > 1", None),
    ("a + 1 > 2", None),
    ("a < b < c", None),
    ("items[0] == 1", None),
    ("some == 1", None),
])
def test_the_way_back_to_feel(source, feel):
    """A safe expression FEEL can say is written as FEEL; any other gives None."""
    assert to_feel(source) == feel


NAMES = st.sampled_from(["a", "amount", "status", "vip", "x_1"])
LITERALS = st.one_of(st.integers(-1000, 1000), st.booleans(), st.none(),
                     st.text(alphabet="ab '\"\\", max_size=4),
                     st.floats(-100, 100, allow_nan=False).map(lambda f: round(f, 2)))
ATOMS = st.one_of(NAMES, LITERALS.map(repr))
COMPARISONS = st.builds(lambda a, op, b: f"{a} {op} {b}", ATOMS,
                        st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), ATOMS)
CONDITIONS = st.recursive(
    st.one_of(NAMES, COMPARISONS),
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"({a}) and ({b})", inner, inner),
        st.builds(lambda a, b: f"({a}) or ({b})", inner, inner),
        st.builds(lambda a: f"not ({a})", inner)),
    max_leaves=6)


@given(CONDITIONS)
def test_feel_written_reads_back_as_the_same_condition(source):
    """Any condition of names, literals, comparisons and and/or/not survives the trip to
    FEEL and back: the same syntax tree."""
    feel = to_feel(source)
    assert feel is not None
    back = translate(feel)
    assert ast.dump(ast.parse(back, mode="eval")) == ast.dump(ast.parse(source, mode="eval"))


def test_flowable_variable_functions_read_as_comparisons():
    """Flowable's var:equals(name, value) and its kin compare a variable with a literal;
    anything else of the prefix stays refused."""
    from gobpm_nb.bpmn.expressions import translate
    assert translate("${var:equals(input,1)}", "juel") == "input == 1"
    assert translate("${var:lte('myVar', 10)}", "juel") == "myVar <= 10"
    assert translate('${variables:notEquals(myVar, "hi") && ok}', "juel") == \
        "myVar != 'hi' and ok"
    for refused in ("${var:equals(a, b)}", "${var:equals(a)}"):
        with pytest.raises(bpm.ModelError, match="does not translate"):
            translate(refused, "juel")
