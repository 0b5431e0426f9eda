"""The compiled calls of the package's trusted makers, written out by
uncobench_z3._trusted.calls_module_text: do not edit (see _trusted._precompiled)."""
# mypy: ignore-errors

# (compiled as _trusted compiles a call's source, which inherits this flag from it)
from __future__ import annotations

CALLS = {}
_M = None  # (the parameters' default when defined: a maker sets its own marker)


# uncobench_z3.evaluation._attribution.Attribution
def __call__(*, label=_M, detail=_M, received=_M, needed=_M, accepted=_M, **_unknown):
    if _unknown or label is _M or detail is _M or received is _M or needed is _M:
        return _self._general(locals())
    _left = 0
    if accepted is _M:
        accepted = _default4
        _left |= 16
    _made = _new(_cls)
    _set_dict(_made, {'label': label, 'detail': detail, 'received': received, 'needed': needed, 'accepted': accepted})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["22c2f7309289f7eefbed1895c58224e474e7ecbb5637862894e2e3814d98ff7d"] = __call__.__code__


# uncobench_z3.evaluation._attribution.Justification
def __call__(*, label=_M, detail=_M, received=_M, needed=_M, imprecise=_M, **_unknown):
    if _unknown or label is _M or detail is _M or received is _M or needed is _M:
        return _self._general(locals())
    _left = 0
    if imprecise is _M:
        imprecise = _default4
        _left |= 16
    _made = _new(_cls)
    _set_dict(_made, {'label': label, 'detail': detail, 'received': received, 'needed': needed, 'imprecise': imprecise})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["264696e809a922dfeeba39811964e101cae2e9bd843bfc679977b7492b5968d7"] = __call__.__code__


# uncobench_z3.evaluation._protocol.AnswerAction
def __call__(*, kind=_M, decision=_M, candidate=_M, number=_M, unit=_M, text=_M, **_unknown):
    if _unknown:
        return _self._general(locals())
    _left = 0
    if kind is _M:
        kind = _default0
        _left |= 1
    if decision is _M:
        decision = _default1
        _left |= 2
    if candidate is _M:
        candidate = _default2
        _left |= 4
    if number is _M:
        number = _default3
        _left |= 8
    if unit is _M:
        unit = _default4
        _left |= 16
    if text is _M:
        text = _default5
        _left |= 32
    _made = _new(_cls)
    _set_dict(_made, {'kind': kind, 'decision': decision, 'candidate': candidate, 'number': number, 'unit': unit, 'text': text})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["e3927ae006db2bdbb7534babaa137c3f11f7dd9f67ac71266b46dc72da135d30"] = __call__.__code__


# uncobench_z3.evaluation._protocol.AskAction
def __call__(*, kind=_M, requests=_M, **_unknown):
    if _unknown or requests is _M:
        return _self._general(locals())
    _left = 0
    if kind is _M:
        kind = _default0
        _left |= 1
    _made = _new(_cls)
    _set_dict(_made, {'kind': kind, 'requests': requests})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["7e3899408d42db75107ec28a4dc6282e80024fd09d040ae4f09d3e4a37f473be"] = __call__.__code__


# uncobench_z3.evaluation._protocol.RoleRequest
def __call__(*, role=_M, question=_M, **_unknown):
    if _unknown or role is _M or question is _M:
        return _self._general(locals())
    _left = 0
    _made = _new(_cls)
    _set_dict(_made, {'role': role, 'question': question})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["3f8350da92a39189d1c49489c02dfc1f570e5c2fd676f1532b29e5a721c25d56"] = __call__.__code__


# uncobench_z3.evaluation._record_book.FollowUpReading
def __call__(*, defect=_M, rules=_M, why=_M, model=_M, model_note=_M, used=_M, **_unknown):
    if _unknown or defect is _M or rules is _M or why is _M:
        return _self._general(locals())
    _left = 0
    if model is _M:
        model = _default3
        _left |= 8
    if model_note is _M:
        model_note = _default4
        _left |= 16
    if used is _M:
        used = _default5
        _left |= 32
    _made = _new(_cls)
    _set_dict(_made, {'defect': defect, 'rules': rules, 'why': why, 'model': model, 'model_note': model_note, 'used': used})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["5382e730ffff8cb3e9f35f96b8ed3fbe0ecedcf24d91809016c49f5f2943dc9a"] = __call__.__code__


# uncobench_z3.evaluation._scoring.AnswerScore
def __call__(*, correct=_M, decision_ok=_M, candidate_ok=_M, number_ok=_M, parsed=_M, rounded_number=_M, **_unknown):
    if _unknown or correct is _M or decision_ok is _M or candidate_ok is _M or number_ok is _M or parsed is _M:
        return _self._general(locals())
    _left = 0
    if rounded_number is _M:
        rounded_number = _default5
        _left |= 32
    _made = _new(_cls)
    _set_dict(_made, {'correct': correct, 'decision_ok': decision_ok, 'candidate_ok': candidate_ok, 'number_ok': number_ok, 'parsed': parsed, 'rounded_number': rounded_number})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["58220dcd5fa3d75be9b70c37deab6d0c73ca05a655b7ba1e978f6b6ed933f745"] = __call__.__code__


# uncobench_z3.evaluation._scoring.ParsedAnswer
def __call__(*, decision=_M, decision_inferred=_M, candidate=_M, number=_M, unit=_M, problems=_M, **_unknown):
    if _unknown:
        return _self._general(locals())
    _left = 0
    if decision is _M:
        decision = _default0
        _left |= 1
    if decision_inferred is _M:
        decision_inferred = _default1
        _left |= 2
    if candidate is _M:
        candidate = _default2
        _left |= 4
    if number is _M:
        number = _default3
        _left |= 8
    if unit is _M:
        unit = _default4
        _left |= 16
    if problems is _M:
        problems = _default5
        _left |= 32
    _made = _new(_cls)
    _set_dict(_made, {'decision': decision, 'decision_inferred': decision_inferred, 'candidate': candidate, 'number': number, 'unit': unit, 'problems': problems})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["6eb1549af4fcfecaa4a8ac9d2c8ca6db6f5cfdfc428dd43c5d3c69fadd6eca6e"] = __call__.__code__


# uncobench_z3.evaluation._trace.EpisodeOutcome
def __call__(*, status=_M, answer=_M, trace=_M, intervention_delivered=_M, end_detail=_M, **_unknown):
    if _unknown or status is _M:
        return _self._general(locals())
    _left = 0
    if answer is _M:
        answer = _default1
        _left |= 2
    if trace is _M:
        trace = _default2
        _left |= 4
    if intervention_delivered is _M:
        intervention_delivered = _default3
        _left |= 8
    if end_detail is _M:
        end_detail = _default4
        _left |= 16
    _made = _new(_cls)
    _set_dict(_made, {'status': status, 'answer': answer, 'trace': trace, 'intervention_delivered': intervention_delivered, 'end_detail': end_detail})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["d05e3573145d5eefa62733cac0fe0847bb65b6afdb6316d57b4e38fc90221501"] = __call__.__code__


# uncobench_z3.evaluation._trace.ReplyRecord
def __call__(*, role=_M, question=_M, text=_M, stated=_M, concerned=_M, defects=_M, resolved=_M, follow_up=_M, fidelity=_M, policy=_M, pending=_M, answers_round=_M, delivered=_M, readings=_M, **_unknown):
    if _unknown or role is _M or question is _M or text is _M:
        return _self._general(locals())
    _left = 0
    if stated is _M:
        stated = _default3
        _left |= 8
    if concerned is _M:
        concerned = _default4
        _left |= 16
    if defects is _M:
        defects = _default5
        _left |= 32
    if resolved is _M:
        resolved = _default6
        _left |= 64
    if follow_up is _M:
        follow_up = _default7
        _left |= 128
    if fidelity is _M:
        fidelity = _default8
        _left |= 256
    if policy is _M:
        policy = _default9
        _left |= 512
    if pending is _M:
        pending = _default10
        _left |= 1024
    if answers_round is _M:
        answers_round = _default11
        _left |= 2048
    if delivered is _M:
        delivered = _default12
        _left |= 4096
    if readings is _M:
        readings = _default13
        _left |= 8192
    _made = _new(_cls)
    _set_dict(_made, {'role': role, 'question': question, 'text': text, 'stated': stated, 'concerned': concerned, 'defects': defects, 'resolved': resolved, 'follow_up': follow_up, 'fidelity': fidelity, 'policy': policy, 'pending': pending, 'answers_round': answers_round, 'delivered': delivered, 'readings': readings})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["0c936a342699be071fafe093006668ccd3f6a9d83be6b7a5c73c017a9ff3f2e5"] = __call__.__code__


# uncobench_z3.evaluation._trace.RoundRecord
def __call__(*, round=_M, action=_M, replies=_M, answer=_M, error=_M, intervention=_M, output=_M, **_unknown):
    if _unknown or round is _M or action is _M:
        return _self._general(locals())
    _left = 0
    if replies is _M:
        replies = _default2
        _left |= 4
    if answer is _M:
        answer = _default3
        _left |= 8
    if error is _M:
        error = _default4
        _left |= 16
    if intervention is _M:
        intervention = _default5
        _left |= 32
    if output is _M:
        output = _default6
        _left |= 64
    _made = _new(_cls)
    _set_dict(_made, {'round': round, 'action': action, 'replies': replies, 'answer': answer, 'error': error, 'intervention': intervention, 'output': output})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["a180d48510e067ff306a6b7e1c5f0fc76507fa79bae590515f74edbae9df653b"] = __call__.__code__


# uncobench_z3.settings._model.StatedValue
def __call__(*, candidate=_M, fact=_M, context=_M, value=_M, low=_M, high=_M, options=_M, **_unknown):
    if _unknown or candidate is _M or fact is _M or context is _M:
        return _self._general(locals())
    _left = 0
    if value is _M:
        value = _default3
        _left |= 8
    if low is _M:
        low = _default4
        _left |= 16
    if high is _M:
        high = _default5
        _left |= 32
    if options is _M:
        options = _default6
        _left |= 64
    _made = _new(_cls)
    _set_dict(_made, {'candidate': candidate, 'fact': fact, 'context': context, 'value': value, 'low': low, 'high': high, 'options': options})
    _set_fields(_made, _fields_sets[_left] if _left else _every_field)
    _set_extra(_made, None)
    _set_private(_made, None)
    return _made
CALLS["e2f1229121b65fff445a317d50a89a74497d6d09496ffe9265494a991066a664"] = __call__.__code__
