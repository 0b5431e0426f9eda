"""Which intent patterns a message as written may match where its tagged text has no match
(:class:`~._screen.NameTouches`; written by ``python -m tests.name_pieces``, do not edit).
For each pattern of an intent, in order: the pieces of its matches (runs between spaces)
that may lie inside a word of letters and digits, "-" before a piece that need not start the
word and after one that need not end it; None for a pattern that is always searched."""

EXACT: tuple[str | None, ...] = (
    "exact exactly",
    "imprecise precise precisely precision",
    "specific specifically specify",
    "actual",
    "concrete definite definitive definitively firm unambiguous",
    (
        "amount answer count date day estimate figure grade level number one option outcome price "
        "quote rate rating result score single status total value"
    ),
    "amount answer date figure number one result single value",
    "down it narrow- that this",
    "down pin-",
    "is it one was which",
    "of one options the these those three two which",
    "of options the two which zmem",
    (
        "acre cent count day db decimal digit dollar euro gram hectare hour kg kilo kw last meter "
        "metre minute mm month mva mw nearest penny percent point pound the to ton tonne unit week "
        "year yen"
    ),
    (
        "a an approximation approximations ballpark band bands beyond bracket brackets estimate "
        "estimates figure forget guess guesses instead interval intervals mind never no not of "
        "range ranges rather rough span spread than that the this window windows without your"
    ),
    (
        "-approximation -approximations -approximationss -ballpark -ballparks -band -bands -bandss "
        "-bracket -brackets -bracketss -estimate -estimates -estimatess -guess -guesses -guessess "
        "-guesss -interval -intervals -intervalss -range -ranges -rangess -span -spans -spread "
        "-spreads -window -windows -windowss are enough figure figures good helpful i is need not "
        "precise sufficient usable useful was were what"
    ),
    "accurate exact less more precise specific vague",
    "a bit broad fuzzy imprecise loose quite rather rough so too vague wide",
    (
        "band bands big bracket brackets broad estimate estimates fuzzy huge interval intervals "
        "large loose range ranges rough spread spreads vague wide window windows"
    ),
    (
        "a an anything approximation approximations ballpark band bands bracket brackets calculate "
        "can cannot do estimate estimates figure guess guesses interval intervals not range ranges "
        "span spread that the this use window windows with work your"
    ),
    "as is it on record recorded records the your",
    (
        "a amount an answer are count date figure grade is not number one rating result score "
        "value was were"
    ),
    "are helpful is meaningless no not too unhelpful use useless vague wide",
    "actually how long many much old",
    "day exact side single specific what which",
    "a false n no not or true whether y yes",
    "amount covers date every everything figure number possibility real score value",
    None,
    "or zmem",
    (
        "above after at before below better earlier fewer greater higher later less lower more or "
        "over under worse zdate znum"
    ),
    (
        "-a -amount -count -date -exact -figure -number -one -score -single -the -value a amount "
        "count date exact figure number one please score single the value"
    ),
    "or zmem",
    "which zmem",
    "not or versus vs zmem",
    "did he is it or she they was zmem",
    "check clarify confirm if know me say state tell whether which",
    "clarification clarify",
    "down firm nail tighten to up",
)
MISMATCH: tuple[str | None, ...] = (
    (
        "assessment assessments audit basis batch certificate column context contexts correct "
        "cycle data dataset date dated dates different document documents draft edition entries "
        "entry expired figure figures file files frame inappropriate incorrect inspection "
        "irrelevant issue iteration list mismatched mixed month months not number numbers obsolete "
        "of one ones out outdated period periods plan plans policy quarter quarters quotation "
        "quote rate rates reading readings record records reference register registers release "
        "report reports required result results review revision revisions right round row run same "
        "schedule schedules scope score scores series sheet site sites snapshot source sources "
        "stale superseded survey surveys table tables test tests the time timeframe unrelated up "
        "value values version versions wrong year years"
    ),
    (
        "correct date dated different expired inappropriate incorrect irrelevant mismatched mixed "
        "not obsolete of out outdated required right same stale superseded the unrelated up wrong "
        "zfact zoth zreq"
    ),
    "confused match- mis mismatch- mix mixed mixup up",
    "agree correspond did do does fit line match not up",
    "after am asked i meant need needed not one ones requested specified the wanted was we what",
    "asked needed not one requested required the was what",
    (
        "assessment context correct cycle edition frame month one period plan policy proper "
        "quarter record register relevant report requested required revision right schedule site "
        "source survey table time timeframe version year"
    ),
    (
        "answer appear appears are be belongs came comes date figure for from is it like look "
        "looks may might must number of only record refers relates reply result seem seems sounds "
        "that the these this those to value was were which your yours zcand zfact zoth"
    ),
    (
        "appear at attached checked cited desk gave given grabbed had have included just listed "
        "looked may me mentioned might must office picked probably provided pulled quoted read "
        "referred reported returned seem sent shared supplied taken team the they to took used you "
        "your zoth"
    ),
    "are is it that these this those was were zoth",
    (
        "appear at attached checked cited desk figure for from gave given grabbed had have in "
        "included just listed looked may me mentioned might must number of office on one picked "
        "probably provided pulled quoted read record referred reported result returned seem sent "
        "shared supplied taken team the they to took under used value you your zfact zoth"
    ),
    (
        "also are assessment assessments audit basis batch been binding certificate check column "
        "context contexts current cycle data dataset date dates document documents draft edition "
        "entries entry expired figure figures file files frame good has have indicative inspection "
        "invalid irrelevant is issue iteration list longer month months news no not now number "
        "numbers obsolete of offer old one ones out outdated period periods plan plans policy "
        "probably quarter quarters quotation quote rate rates reading readings record records "
        "reference register registers release replaced report reports result results review "
        "revision revisions round row run schedule schedules scope score scores series sheet site "
        "sites snapshot source sources stale study superseded survey surveys table tables test "
        "tests time timeframe too valid value values version versions was were wrong year years "
        "zfact zoth"
    ),
    (
        "after also applicable apply are asked assessment assessments audit basis batch been "
        "certificate check column context contexts correct count current cycle data dataset date "
        "dates document documents does draft edition entries entry expect expected figure figures "
        "file files frame has have help i in inspection is issue iteration like list looking "
        "matter mean meant mind month months need needed not now number numbers offer one ones "
        "period periods plan plans policy prefer probably quarter quarters quotation quote rate "
        "rates reading readings record records reference register registers release relevant "
        "report reports requested require required result results review revision revisions right "
        "round row run schedule schedules scope score scores series sheet site sites snapshot "
        "source sources specified study survey surveys table tables test tests the time timeframe "
        "useful valid value values version versions want wanted was we were what year years zfact "
        "zoth"
    ),
    "although based but for from however on the though used using whereas while with yet zoth",
    (
        "a- an- any- at discard discard- disregard disregard- drop drop- except except- excluding "
        "excluding- for forget forget- from ignore ignore- ignoring ignoring- in in- instead "
        "interested never never- no no- nor nor- not not- of of- on other rather scrap scrap- skip "
        "skip- than than- that- the the- this- those- without without- your- zfact zoth"
    ),
)
REFERENCE: tuple[str | None, ...] = (
    (
        "a an approximation approximations ballpark band bands bracket brackets broad estimate "
        "estimates figure guess guesses interval intervals range ranges rough span spread such "
        "that the these this those vague wide window windows your"
    ),
    (
        "alternatives answer either options or possibilities reply response that the these this "
        "those two your"
    ),
    (
        "answered gave listed mentioned offered provided quoted replied said sent shared told "
        "wrote you"
    ),
    "down it narrow- pin- that them these this those",
    "is it of one options the these those two was which",
    "about exact it less more on precise regarding specific than that this with",
    "either or zmem",
    "and between to zdate znum",
    "between in somewhere",
)
