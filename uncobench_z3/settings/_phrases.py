"""The phrase inventories of the request reader: how people say what they want.

These are the only English phrases the reader knows beyond the task's own vocabulary. Each
inventory is a list of regular expressions matched on the *tagged* message: canonical
lower-case words (see :mod:`._words`) in which the task's own words are replaced by tags -
``zcand`` a candidate, ``zfact`` a fact, ``zmem`` a member of an enum fact, ``zreq`` /
``zoth`` the required / another context of a fact, ``znum`` a number, ``zdate`` a date -
each sentence ending in ``|`` (``? |`` for a question). So "Did Marcus pass or fail in
March?" reads ``did zcand zmem or zmem in zreq ? |`` and the options question is found
without knowing the task.

Tuned on the development split of the follow-up corpus only (``tests/data/followups``);
the held-out split was written afterwards, in other words (docs/settings.md).
"""

from __future__ import annotations

import re


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` (word lists stay readable in the source)."""
    return frozenset(text.split())


_W = r"[a-z0-9]+"  # one word
#: A number in digits (tagged) or in words ("more than two incidents", "five years or not").
_NUM = (
    r"(?:znum|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
    r"fifty|a dozen)"
)
_GAP = rf"(?: {_W}){{0,3}}"  # up to three words in between
_AUX = r"(?:did|does|do|is|was|has|have|had|can|could|will|would|are|were|should|shall)"

# -- precision: "exact value" -------------------------------------------------------------------
_RANGE_NOUNS = (
    r"(?:range|ranges|interval|intervals|band|bands|bracket|brackets|window|windows|estimate|"
    r"estimates|approximation|approximations|ballpark|span|spread|guess|guesses|ballpark figure)"
)
EXACT = [
    r"\bexact(?:ly)?\b",
    r"\bprecise(?:ly)?\b|\bprecision\b|\bimprecise\b",
    r"\bspecific(?:ally)?\b|\bspecify\b",
    r"\bactual\b",
    r"\b(?:definite|definitive|definitively|concrete|unambiguous|firm)\b",
    r"\bsingle (?:value|figure|number|date|answer|day|amount|result|one|status|option|score|"
    r"estimate|rate|rating|grade|count|total|outcome|price|quote|level)\b",
    r"\bone (?:single )?(?:value|figure|number|date|answer|amount|result)\b",
    r"\bnarrow\w*" + _GAP + r" down\b|\bnarrow\w* (?:it|that|this)\b",
    r"\bpin\w*" + _GAP + r" down\b",
    r"\bwhich (?:one )?(?:is it|was it|it is|it was)\b",
    r"\bwhich (?:one|of (?:the|those|these) (?:two|three|options))\b",
    r"\bwhich (?:of )?(?:zmem|the two|the options)\b",
    r"\bto the (?:nearest )?(?:day|dollar|cent|pound|penny|euro|yen|year|month|week|point|unit|"
    r"hour|minute|percent|decimal|digit|hectare|acre|metre|meter|tonne|ton|kilo|kg|gram|mm|"
    r"db|kw|mw|mva|day count|last digit)\b",
    r"\b(?:not|no|without|rather than|instead of|never mind the|forget the|beyond (?:a|the)) "
    r"(?:a |an |the |that |this |your )?(?:rough )?" + _RANGE_NOUNS + r"\b",
    _RANGE_NOUNS + r"(?: is| was|s are|s were)(?: not|n't) (?:enough|sufficient|good enough|"
    r"precise enough|helpful|useful|usable|what i need)\b",
    r"\b(?:more|less) (?:precise|specific|exact|vague|accurate)\b",
    r"\b(?:too|so|rather|quite|a bit) (?:vague|broad|wide|rough|imprecise|fuzzy|loose)\b",
    r"\b(?:wide|broad|big|huge|large|vague|rough|loose|fuzzy) (?:range|estimate|interval|band|"
    r"window|spread|bracket)s?\b",
    r"\bcan(?:not| not)? (?:use|work with|do anything with|calculate with) "
    r"(?:a |an |the |that |this |your )?" + _RANGE_NOUNS + r"\b",
    r"\bas (?:it is )?recorded\b|\bon (?:the |your )?records?\b(?= ?\?)",
    r"\b(?:is|are|was|were) not (?:a|an|one) (?:date|number|figure|value|score|answer|amount|"
    r"count|rating|result|grade)\b",
    r"\b(?:is|are) (?:meaningless|useless|no use|not helpful|unhelpful|too vague|too wide)\b",
    r"\bhow (?:many|much|long|old)\b[^|]*\bactually\b",
    r"\bwhich side\b|\b(?:which|what) (?:exact |specific |single )?day\b",
    r"\byes or no\b|\byes no\b|\ba yes\b|\bwhether or not\b|\btrue or false\b|\by n\b",
    r"\breal (?:number|figure|value|date|score|amount)\b|\bcovers every(?:thing| possibility)\b",
    r"\b(\w+) or not \1\b|\bor not \?",
    r"\bor (?:\w+ ){0,2}zmem \?",
    r"\b(?:znum|zdate) or (?:above|more|over|higher|better|greater|below|less|under|lower|"
    r"fewer|worse|earlier|later|before|after)\b|\bat or (?:above|below)\b",
    r"(?:^|\| )(?:the |a |one |single |exact )?(?:number|figure|value|amount|date|score|count)"
    r" please\b",
    r"\bzmem or(?: \w+){0,2} zmem\b",
    r"\bzmem \? \| zmem \? \| (?:\w+ )*?which\b",
    r"\bzmem (?:or|vs|versus) (?:not|zmem)\b",
    r"\bzmem or (?:is it |was it |did (?:he|she|they|it) )?zmem\b",
    r"\b(?:confirm|tell me|clarify|say|state|know|check) (?:whether|if|which)\b",
    r"\bclarif(?:y|ication)\b",
    r"\b(?:down to|nail down|firm up|tighten)\b",
]
#: Precision said not to be needed: "no need to be precise", "don't bother with exact
#: figures", "the exact figure isn't required", "a rough estimate is fine". The exact phrases
#: inside such a statement ("precise", "exact", "rough estimate") do not ask for the exact
#: value (a question for one, "did he pass?", still does). What these cancel in a tagged text
#: they cancel in the message as written (its candidate names and one-word fact names written
#: as words), so they read no tag of a name, and words of any kind only as runs of them (the
#: names' words as written are as many as their tags or more).
#: The options of a reply named as a choice: "(whether) he passed or failed" (not "whether
#: Marcus passed...": a name's words, any of them, would take any words before the options,
#: "it does not matter if it is a range I need to know whether Marcus passed or failed").
_OPTIONS = r"(?:(?:he|she|they|it) )?zmem or(?: [^ |?]+)* zmem"
_PRECISION = (
    r"(?:exact|exactly|exactness|precise|precisely|precision|specific|specifics|specifically|"
    r"accurate|accurately|accuracy|definite|definitive|single|actual|"
    r"narrow\w*(?: (?:it|that|this|them))?(?: down)?|pin\w*(?: (?:it|that|this|them))? down|"
    r"(?:confirm|tell me|say|state|know|check|clarify) (?:whether|if|which)(?: " + _OPTIONS + r")?|"
    r"(?:whether|if) " + _OPTIONS + r")"
    r"(?: to the (?:nearest )?(?:day|dollar|cent|year|month|week|unit|digit|decimal|point|"
    r"percent))?"
)
_PRECISION_FILLER = (
    r"(?: (?:to|for|be|being|get|getting|give|giving|have|know|knowing|find|finding|about|with|"
    r"over|on|of|the|a|an|it|its|this|that|these|those|any|your|very|too|overly|super|"
    r"perfectly|completely|totally|fully|entirely|absolutely|so|quite|figure|figures|number|"
    r"numbers|value|values|you|me|us|here|now|yet|at|all|really|strictly))"
)
_PRECISION_NOUN = (
    r"(?: (?:figure|figures|value|values|number|numbers|date|dates|amount|amounts|answer|"
    r"answers|count|counts|detail|details|data|one|ones|result|results|level|levels|score|"
    r"scores|rate|rates))?"
)
EXACT_CANCELLED = [
    # (not "rather than" or "instead of": "a range instead of the exact figure" asks for it)
    r"\b(?:no need|not need|not needed|need not|not necessary|unnecessary|not required|"
    r"not essential|not important|no point|not bother|not worry|not fuss|not looking for|"
    r"not after|not asking for|not expecting|not chasing|not have to|no requirement|not care|"
    r"not mind)" + _PRECISION_FILLER + r"{0,4} " + _PRECISION + r"\b",
    # (not "without" alone: "without the exact figure we cannot decide" asks for it)
    r"\bwithout (?:being|getting|going)(?: (?:too|overly|very|so|that))? " + _PRECISION + r"\b",
    r"\bno " + _PRECISION + _PRECISION_NOUN + r"(?: is| are)? (?:needed|necessary|required|"
    r"expected)\b",
    # a range said not to be too wide: "5 to 30 is not too wide"
    r"\b(?:not|never|hardly) (?:too|so|overly|that|very|a bit|rather|quite) (?:vague|broad|wide|"
    r"rough|imprecise|fuzzy|loose)\b",
    r"\b" + _PRECISION + _PRECISION_NOUN + r"(?: (?:is|are|was|were|would be|will be))? "
    r"(?:not|never) (?:really |strictly |absolutely |that )?(?:needed|necessary|required|"
    r"essential|important|critical|crucial|expected|a priority|a must|the point)\b",
    r"\b" + _PRECISION + _PRECISION_NOUN + r" (?:(?:does|do|did|would|will) not (?:really )?"
    r"matter|(?:is|are) (?:unnecessary|unneeded|optional|no big deal)|unnecessary|unneeded|"
    r"optional)\b",
    r"\b(?:does|do|did|would|will) not matter (?:if|whether)(?:(?: (?:it|its|it is|is|they|"
    r"they are|are|the|figure|figures|number|value|answer|not|quite|100|percent|totally|"
    r"completely|fully))* " + _PRECISION + r"| " + _OPTIONS + r")\b",
    r"\b(?:rough|ballpark|approximate|broad|wide|vague|loose|round)(?: (?:figure|number|"
    r"estimate|range|idea|value|answer|guess|band|bracket|interval|window|spread)s?)? (?:is|are|"
    r"will|would|should)(?: be)? (?:fine|ok|okay|enough|good enough|sufficient|adequate|"
    r"acceptable|all i need|what i need|do)\b",
    # a choice between the options said not to matter: "passed or failed - either is fine",
    # "pass or fail, I don't mind" (not after a question: "pass or fail? Either way, tell me";
    # nor the options as the answer's form: "just passed or failed is fine", "a one-word
    # answer, passed or failed, is fine", "passed or failed is fine as an answer" ask which)
    r"\bzmem or(?<!just zmem or)(?<!only zmem or)(?<!simply zmem or)(?<!answer zmem or)"
    r"(?<!word zmem or)(?: [^ |?]+)* zmem(?: \|)?(?: (?:it|that|i|we))? (?:(?:either|whichever|any|"
    r"both)(?: one| of them| option| answer| result| way)? (?:is|are|will|would|should)(?: be)? "
    r"(?:fine|ok|okay|good|enough|acceptable|do)|(?:is|are|would be|will be) (?:fine|ok|okay|"
    r"acceptable|good enough)\b(?! as\b)|(?:do|does|would|will) not (?:mind|care|matter))\b",
]
#: A yes/no question about one option ("Did he pass?") or a threshold ("Is it over 12?");
#: "Can you send ...?" is a request, not a question about the value.
_LEAD = r"(?:(?:so|and|but|ok|okay|well|also|then|hi|hey|sorry|right|now|just|quick question) )*"
#: An elliptical question about one value: "Peregrine certified to EXC3?", "Priya - passed?"
#: (no question word; "can you send ...?" is a request).
#: One option or value that a question is about, not a bound of a range: "between 5 and
#: 30?", "5 to 30?", "5-30?" ask about the imprecise reply itself, not for one value.
_ONE_VALUE = (
    r"(?<!znum )(?<!znum to )(?<!znum and )(?<!zdate )(?<!zdate to )(?<!zdate and )"
    r"\b(?:zmem|zdate|" + _NUM[3:] + r"\b(?!(?: to| and)? (?:zdate|" + _NUM[3:] + r"\b)"
)
ELLIPTICAL_QUESTION = re.compile(
    r"(?:^|\| )(?![^|?]*\b(?:what|which|how|when|where|who|whom|why|whose)\b)"
    r"(?!(?:please )?(?:can|could|would|will|may) (?:you|u)\b)[^|?]*" + _ONE_VALUE + r"[^|?]*\?"
)
YES_NO_QUESTION = re.compile(
    r"(?:^|\| )" + _LEAD + _AUX + r" (?!you\b|u\b)[^|?]*?" + _ONE_VALUE + r"[^|]*\?"
)
LEAD_WORDS = frozenset(
    [
        "so",
        "and",
        "but",
        "ok",
        "okay",
        "well",
        "also",
        "then",
        "hi",
        "hey",
        "sorry",
        "right",
        "now",
        "just",
    ]
)
#: A question or check against a threshold: "at least 12 years", "before 1 August".
COMPARISON = re.compile(
    r"\b(?:at least|at most|more than|less than|fewer than|over|under|above|below|"
    r"greater than|higher than|lower than|exceed\w*|meet\w*|reach\w*|before|after|"
    r"no later than|no earlier than|on or before|on or after|by|within|up to|beyond)"
    r"(?: the)?(?: zfact)?(?: of)? (?:zdate|one|" + _NUM[3:] + r"\b"
)

# -- the mismatch: "wrong period", "that's the April one" ---------------------------------------
_SCOPE_NOUNS = (
    r"(?:period|periods|context|contexts|version|versions|site|sites|date|dates|year|years|"
    r"month|months|quarter|quarters|assessment|assessments|record|records|table|tables|schedule|"
    r"schedules|register|registers|edition|revision|revisions|cycle|round|report|reports|"
    r"survey|surveys|one|ones|entry|entries|source|sources|document|documents|list|snapshot|"
    r"timeframe|time frame|basis|reference|dataset|data|plan|plans|policy|audit|test|tests|"
    r"inspection|quote|quotation|review|file|files|series|batch|reading|readings|scope|"
    r"time|column|row|sheet|release|issue|edition|figure|figures|value|values|number|numbers|"
    r"result|results|rate|rates|score|scores|certificate|register|iteration|draft|run)"
)
_WRONG = (
    r"(?:wrong|incorrect|different|outdated|out of date|out dated|superseded|stale|obsolete|"
    r"expired|mismatched|mixed up|not the right|not the correct|not the required|not the same|"
    r"inappropriate|unrelated|irrelevant)"
)
_YOU_GAVE = (
    r"(?:you|your team|they|the office|the desk) (?:have |had |must have |may have |might have |"
    r"seem to have |appear to have |probably |just )?(?:sent|gave|given|provided|quoted|used|"
    r"reported|pulled|shared|listed|supplied|returned|looked at|checked|picked|grabbed|gave me|"
    r"sent me|mentioned|cited|referred to|read|took|taken|attached|included)"
)
#: the words after a context that may stand before what is said of it ("the April *one* is")
_NOUN_AFTER_CONTEXT = (
    r"(?: one| figure| value| result| record| entry| number| data| offer| quote| report| survey| "
    r"study| review| check| " + _SCOPE_NOUNS + r")?"
)
_CONTEXT_NOUN = r"(?: zfact)?" + _NOUN_AFTER_CONTEXT
#: a context said to be wrong, after its words: "(the April one) is outdated"
_SAID_WRONG = (
    r" (?:is|was|are|were|has been|have been) (?:now |also |probably )?(?:wrong|superseded|"
    r"outdated|out of date|old|old news|too old|stale|obsolete|expired|no longer valid|"
    r"no longer current|invalid|irrelevant|no good|not binding|indicative|replaced)"
)
#: what a context said not to be is asked for: "(March) is not what I need" (not "... what I
#: got", which says the reply was not for it)
_WHAT_I_NEED = (
    r"what (?:i|we) (?:\w+ )?(?:need|needed|asked|"
    r"requested|want|wanted|meant|mean|specified|require|required|expected|expect|like|prefer|"
    r"after|looking|in mind)"
)
#: a context said not to be right, after its words: "(the April one) is not what I need"
_SAID_NOT_RIGHT = (
    r" (?:(?:is|was|are|were|has been|have been) (?:now |also |probably )?not|isn't|is not|"
    r"was not|does not|doesn't) (?:now |also |probably )?(?:" + _WHAT_I_NEED + r"|relevant|"
    r"the one|needed|useful|applicable|valid|right|correct|current|the required|help|count|"
    r"apply|matter)"
)
#: a context said to be the wrong one, after its words: "(March) is the wrong assessment"
_SAID_THE_WRONG = (
    r" (?:is|was|are|were) (?:now |also |probably |clearly )?(?:the |a |an )?(?:wrong|incorrect|"
    r"outdated|out of date|superseded|stale|obsolete|expired|not the right|not the correct|"
    r"not the required|inappropriate|irrelevant)"
)
"""(not "different", "not the same", "unrelated": "March is a different one" may say the reply
was not for it, not that it is wrong)"""
#: any of the three ways of saying a context is not the one ("... is outdated", "... is not
#: what I need", "... is the wrong one")
_SAID_NOT_IT = r"(?:" + _SAID_WRONG + r"|" + _SAID_NOT_RIGHT + r"|" + _SAID_THE_WRONG + r")"
#: A context said to be wrong by the words after it ("the March one is outdated", "March 2026
#: is not what I need"), matched on the words after the context's (each written after a
#: space): a context so named is named to be rejected, as after "not".
CONTEXT_REJECTED_AFTER = re.compile(r"(?: (?:zreq|zoth))*" + _CONTEXT_NOUN + _SAID_NOT_IT + r"\b")
#: "the right period", "the correct one": asked for, it says the reply's was not
_RIGHT_SCOPE = (
    r"(?:right|correct|required|proper|relevant|requested) (?:period|context|version|site|year|"
    r"month|quarter|assessment|edition|revision|cycle|register|table|schedule|report|survey|"
    r"record|plan|policy|one|timeframe|time frame|source)"
)
MISMATCH = [
    r"\b" + _WRONG + _GAP + r" " + _SCOPE_NOUNS + r"\b",
    r"\b" + _WRONG + r" (?:zoth|zreq|zfact)\b",
    r"\bmismatch\w*\b|\bmis ?match\w*\b|\bmix ?up\b|\bmixed up\b|\bconfused\b",
    r"\b(?:does|do|did) not (?:match|line up|correspond|fit|agree)\b",
    r"\bnot (?:what|the one|the ones) (?:i|we) (?:asked|requested|need|needed|wanted|meant|"
    r"specified|was after|am after)\b",
    r"\bnot (?:what|the one) (?:was )?(?:asked|requested|needed|required)\b",
    r"\b" + _RIGHT_SCOPE + r"\b",
    # a reply described as being for another context: "that's the April one"
    r"\b(?:that|this|it|which|these|those|yours|the reply|your reply|your answer|the answer|"
    r"the figure|the value|the result|the record|the number|the date|(?:that|this|the|your) "
    r"zfact)(?: (?:for|of) zcand)? (?:is|was|are|were|"
    r"looks like|look like|seems|seem|appears|appear|sounds like|refers|relates|comes|came|"
    r"belongs|is only|was only|must be|might be|may be)(?: to| from| for| like)?"
    + _GAP
    + r" zoth\b",
    r"\b" + _YOU_GAVE + _GAP + r" zoth\b",
    r"\b(?:is|was|are|were) (?:that|this|it|these|those)(?: \w+){0,3} zoth\b",
    r"\b"
    + _YOU_GAVE
    + r"(?: me)?"
    + _GAP
    + r" (?:zfact|figure|value|result|one|record|number)"
    + _GAP
    + r" (?:for|from|of|in|under|on|at) (?:the )?zoth\b",
    # another context said to be wrong ("the April one is outdated"), or said not to be right
    # ("... is not what I need"): said to be right ("the April one is what I need") it is no
    # mismatch, so those words take a negation, and said not to be wrong ("the April one is
    # not outdated") neither, so these take none
    r"\bzoth" + _CONTEXT_NOUN + _SAID_WRONG + r"\b",
    r"\bzoth" + _CONTEXT_NOUN + _SAID_NOT_RIGHT + r"\b",
    r"\b(?:based on|from|for|using|used|with|on) (?:the )?zoth\b[^|]*\b(?:but|however|yet|while|"
    r"whereas|though|although)\b",
    r"\b(?:not|no|never|nor|without|rather than|instead of|other than|except|excluding|"
    r"ignore|ignoring|discard|disregard|drop|forget|skip|scrap|not interested in)"
    r"(?: the| a| an| your| that| this| those| any)?(?: zfact)?(?: from| for| in| of| on| at)?"
    r"(?: the)? zoth\b",
]

_MIXED_UP = r"(?:mis ?match(?:es|ed|ing)?|mix ?up|mixed up|confused)"
"""the words of :data:`MISMATCH` for a mix-up (said not to be one in :data:`MISMATCH_CANCELLED`)"""
#: Another context said to be the right one: "the April assessment is the right one", "the
#: correct period is April". The mismatch phrases inside such a statement ("right one") do not
#: say the reply was for the wrong context: it affirms the context the reply was for. What
#: these cancel in a tagged text they cancel in the message as written (its candidate names
#: and one-word fact names written as words), so no candidate tag is read, and the one word
#: after the context ("the April 2026 clearance") is any word, "zfact" or the fact's name.
MISMATCH_CANCELLED = [
    r"\bzoth(?: zreq)?(?: (?!zcand\b)[^ |?]+)? (?:is|was|are|were|remains|seems|looks|must be|"
    r"should be|would be|will be)(?: to be| like)?(?: (?:definitely|indeed|clearly|still|"
    r"actually|really|certainly|also|surely|obviously|exactly|just))? (?:the |a |an |our |my )?"
    + _RIGHT_SCOPE
    + r"\b",
    r"\b"
    + _RIGHT_SCOPE
    + r" (?:is|was|are|were|would be|should be|will be) (?:the |a |an )?zoth\b",
    # the required context said to be wrong ("the March one is superseded, send the April
    # one"): what the rest of its clause says is wrong is the required context
    r"\bzreq(?: zreq| zoth)*(?: (?!zcand\b)[^ |?]+)?"
    + _NOUN_AFTER_CONTEXT
    + _SAID_NOT_IT
    + r"\b[^|]*",
    # a mismatch said not to be one, in a statement ("it's not a mismatch", "that isn't the
    # wrong year", "nothing wrong with the period", "no mismatch"; "isn't that the wrong
    # year?" still asks, and "No, wrong assessment" - its comma not read - still says it)
    r"\b(?:not|never|nothing|hardly) (?:(?:a|an|the|any|really|actually|so|too|at all) )*"
    r"\b(?:"
    + _WRONG
    + r"|"
    + _MIXED_UP
    + r")\b(?:(?: (?!"
    + _WRONG
    + r"\b)\w+){0,3} "
    + _SCOPE_NOUNS
    + r"\b| (?!zcand\b)[^ |?]+)?(?![^|]*\?)",
    r"\bno (?:(?:real|actual) )?" + _MIXED_UP + r"(?![^|]*\?)",
]

# -- a reference to the (imprecise) reply itself ------------------------------------------------
REPLY_REFERENCE = [
    r"\b(?:that|this|the|your|those|these|such a|such an|a) (?:rough |broad |wide |vague )?"
    + _RANGE_NOUNS
    + r"\b",
    r"\b(?:that|this|your|the|those|these) (?:reply|answer|response|options|alternatives|"
    r"possibilities|either or|two options|two possibilities)\b",
    r"\byou (?:said|gave|wrote|sent|replied|answered|told|mentioned|quoted|offered|listed|"
    r"provided|shared)\b",
    r"\bnarrow\w* (?:it|that|this|them|those|these)\b|\bpin\w* (?:it|that|this) down\b",
    r"\bwhich (?:one )?(?:is it|was it)\b|\bwhich (?:of )?(?:the two|the options|those|these)\b",
    r"\b(?:more|less) (?:precise|specific|exact) (?:about|on|with|than|regarding) "
    r"(?:it|that|this)\b",
    r"\beither zmem or zmem\b|\bzmem or zmem\b",
    r"\bbetween (?:znum|zdate) and (?:znum|zdate)\b|\b(?:znum|zdate) (?:to|and|-) (?:znum|zdate)\b",
    r"\bsomewhere (?:between|in)\b",
]

# -- candidates ---------------------------------------------------------------------------------
_KIND_NOUNS = (
    r"(?:candidates|applicants|bidders|tenderers|suppliers|vendors|contractors|companies|firms|"
    r"providers|sites|locations|vessels|ships|lots|batches|options|people|persons|nominees|"
    r"shortlisted|shortlist|entrants|proposals|offers|tenders|names|individuals|operators|"
    r"partners|facilities|plants|teams|universities|institutions|cohort|the three|all three)"
)
ALL_CANDIDATES = [
    r"\ball(?: of)?(?: the)?(?: three| 3)? " + _KIND_NOUNS + r"\b",
    r"\b(?:each|every|any) (?:single )?(?:one|candidate|applicant|bidder|tenderer|supplier|vendor|"
    r"contractor|company|firm|provider|site|location|vessel|ship|lot|batch|option|person|nominee|"
    r"entrant|proposal|offer|tender|name|individual|operator|facility|plant|of them|"
    r"of the three)\b",
    r"\b(?:everyone|everybody|all three|all 3|all of them|both and|across the board|"
    r"for all|the whole shortlist|the full shortlist|the entire shortlist|whole list|all names)\b",
    r"\b(?:the|these|those) (?:three|3) " + _KIND_NOUNS + r"\b",
    r"\bthe (?:three|3)\b",
]
#: A singular personal pronoun: resolved to the candidate in focus, if there is one.
PRONOUNS = re.compile(r"\b(?:he|she|him|her|his|hers|himself|herself)\b")
PLURAL_PRONOUNS = re.compile(r"\b(?:they|them|their|theirs)\b")
#: A candidate or a fact named to be left out ("not Marcus - I need Priya's years", "Priya
#: rather than Marcus", "everyone except Marcus", "forget the allowance, his availability
#: date?"): each match ends at the candidate's or the fact's tag. Not before a context
#: ("rather than Marcus's April one" rejects the context) or, for a candidate, a fact ("forget
#: Marcus's allowance" may leave out either), nor "not" but before a clause's end, another
#: candidate or "but" ("not Marcus's April one" rejects a context; "why not Marcus?", "don't
#: forget Marcus" leave no one out), nor before the words of a reply about it ("rather than
#: Marcus's range", "instead of the allowance you sent": the reply is left out, not what it is
#: about), nor "except" or "(but) not" after what is said to be fine ("all fine except the
#: allowance", "I have everything except Marcus", "Priya's is fine, but not Marcus's": the
#: one left is the one asked about). Each pattern is screened by its own words and its tag
#: (:mod:`._screen`).
_SAID_FINE = ("fine", "good", "ok", "okay", "clear", "right", "correct", "exact", "out")
"""the last words of a statement that something is fine ("checks out", "looks right")"""


def _not_after_fine(word: str) -> str:
    """Lookbehinds (after ``word``) that a statement that something is fine does not stand
    just before ``word``, or before "but" before it."""
    return "".join(f"(?<!{fine} {word})(?<!{fine} but {word})" for fine in _SAID_FINE)


_LEAVE_OUT = (
    r"(?<!not )(?<!never )\b(?:rather than|instead of|other than|except|excepting|excluding|"
    r"forget|ignore|skip|never mind)\b" + _not_after_fine("except") + r"(?<!everything except)"
)
_OF_A_REPLY = (
    r"(?:[^ |?]+ )?(?:" + _RANGE_NOUNS + r"|options|answer|answers|reply|replies|response)"
)
"""the words of a reply after a candidate or a fact ("Marcus's earlier answer"; after a fact,
"you" too: "the allowance you sent". Not after a candidate: "instead of Marcus, could you
check Priya" leaves him out)"""
EXCLUDED = [
    _LEAVE_OUT + r"(?: for| about)? zcand\b(?! (?:zoth|zreq|zfact|" + _OF_A_REPLY + r")\b)",
    r"(?<!why )\bnot\b"
    + _not_after_fine("not")
    + r"(?: for| about)? zcand\b(?= \|| zcand\b| but\b| zfact but\b)",
    _LEAVE_OUT
    + r"(?: the| his| her| their| your| its)? zfact\b(?! (?:zoth|zreq|you|"
    + _OF_A_REPLY
    + r")\b)",
    r"(?<!why )\bnot\b"
    + _not_after_fine("not")
    + r"(?: the| his| her| their| your| its)? zfact\b(?= \|| but\b)",
]

# -- periods named by their order --------------------------------------------------------------
#: Words that name a period by its order. They name one of a fact's contexts when one of
#: the next three words is the fact, "one", a scope noun or a word of the fact's contexts
#: ("the latest layout", "the most recent check"), or when they end the sentence ("we need
#: this year's").
LATEST = re.compile(
    r"\b(?:latest|newest|most recent|more recent|recent|current|currently valid|up to date|"
    r"updated|this year s|this year|new|newer)\b"
)
EARLIEST = re.compile(
    r"\b(?:previous|earlier|earliest|older|oldest|old|prior|last year s|last year|former|"
    r"original|past|preceding)\b"
)
ORDER_TARGETS = frozenset(["zfact", "one", "ones", *_SCOPE_NOUNS[3:-1].split("|")])

#: Label words too general to name a fact on their own (they still name the only fact of the
#: addressed role that has them).
GENERIC_WORDS = word_set(
    """
    value values number numbers figure figures result results status level levels rate rates
    date dates total totals record records amount amounts score scores current annual year
    years month months day days hour hours per the and for with from that this of in on to a
    an at by or its their cost costs fee fees price prices percentage share index count time
    times period periods size type class grade standard standards limit limits certificate
    certification certified report reported test tests rating ratings approval approved
    assessment assessed check checks review data plan policy schedule table list register
    """
)

#: Words never taken as part of a context's distinguishing words: people say them about replies.
CONTEXT_STOPWORDS = word_set(
    """
    the a an of for at in on to and from by with as per stated reported quoted given sent
    provided declared record records date dates value figure result check checks checked
    review reviewed double
    """
)
