use serde_json::{Value, json};

use super::*;

fn round_trip(event: Value) -> (Value, Vec<String>) {
    let encoded = encode_event(&event).unwrap_or_else(|e| panic!("{event}: {e}"));
    match decode_event(&encoded.bytes).unwrap() {
        Decoded::Event(back, _) => (Value::Object(back), encoded.lost),
        other => panic!("{other:?}"),
    }
}

/// One event of every shape the conversion treats specially comes back as it went in.
#[test]
fn events_come_back_whole() {
    let events = [
        json!({"type":"RUN_STARTED","threadId":"t","runId":"r","timestamp":1700000000000_i64,
               "input":{"threadId":"t","runId":"r","state":{"n":1},"messages":[
                   {"id":"u1","role":"user","content":"hi"},
                   {"id":"u2","role":"user","content":[{"type":"text","text":"look"},
                       {"type":"image","source":{"type":"url","value":"https://x/y.png","mimeType":"image/png"}}]},
                   {"id":"a1","role":"assistant","toolCalls":[{"id":"c1","type":"function",
                       "function":{"name":"f","arguments":"{}"}}]},
                   {"id":"t1","role":"tool","toolCallId":"c1","content":"ok"}],
                 "tools":[{"name":"f","description":"d","parameters":{"type":"object"}}],
                 "context":[{"description":"c","value":"v"}],"forwardedProps":{"a":[1,2.5,null,true]},
                 "resume":[]}}),
        json!({"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}),
        json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"héllo \u{1F600}"}),
        json!({"type":"TEXT_MESSAGE_END","messageId":"m","rawEvent":{"x":[{}]}}),
        json!({"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f","parentMessageId":"m"}),
        json!({"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{\"a\":1}"}),
        json!({"type":"TOOL_CALL_END","toolCallId":"c"}),
        json!({"type":"TOOL_CALL_RESULT","messageId":"t","toolCallId":"c","content":"done","role":"tool"}),
        json!({"type":"TOOL_CALL_RESULT","messageId":"t","toolCallId":"c",
               "content":[{"type":"text","text":"a"},{"type":"document","source":{"type":"data","value":"QQ==","mimeType":"application/pdf"}}]}),
        json!({"type":"STATE_SNAPSHOT","snapshot":{"list":[1,2],"deep":{"s":"x","b":false,"n":null}}}),
        json!({"type":"STATE_SNAPSHOT","snapshot":null}),
        json!({"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1},{"op":"remove","path":"/b"},
               {"op":"move","from":"/c","path":"/d"},{"op":"test","path":"/e","value":null}]}),
        json!({"type":"MESSAGES_SNAPSHOT","messages":[{"id":"s","role":"system","content":"be nice"},
               {"id":"x","role":"activity","activityType":"PLAN","content":{"steps":["a"]}},
               {"id":"r","role":"reasoning","content":"hmm"}]}),
        json!({"type":"ACTIVITY_SNAPSHOT","messageId":"x","activityType":"PLAN","content":{"steps":[]},"replace":false}),
        json!({"type":"ACTIVITY_DELTA","messageId":"x","activityType":"PLAN","patch":[{"op":"replace","path":"/steps","value":["b"]}]}),
        json!({"type":"RAW","event":{"anything":"goes"},"source":"openai"}),
        json!({"type":"CUSTOM","name":"n","value":42}),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","result":{"ok":true}}),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success","pendingToolCallIds":["c"]}}),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"i","reason":"approval"}]}}),
        json!({"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"},
               "usage":[{"provider":"p","model":"m","inputTokens":10,"outputTokens":2}]}),
        json!({"type":"RUN_ERROR","message":"boom","code":"E1"}),
        json!({"type":"STEP_STARTED","stepName":"s"}),
        json!({"type":"STEP_FINISHED","stepName":"s"}),
        json!({"type":"TEXT_MESSAGE_CHUNK","messageId":"m","delta":"x"}),
        json!({"type":"TOOL_CALL_CHUNK","toolCallId":"c","toolCallName":"f","delta":"{"}),
        json!({"type":"REASONING_START","messageId":"r"}),
        json!({"type":"REASONING_MESSAGE_START","messageId":"r","role":"reasoning"}),
        json!({"type":"REASONING_MESSAGE_CONTENT","messageId":"r","delta":"think"}),
        json!({"type":"REASONING_MESSAGE_END","messageId":"r"}),
        json!({"type":"REASONING_END","messageId":"r"}),
        json!({"type":"REASONING_ENCRYPTED_VALUE","subtype":"message","entityId":"r","encryptedValue":"xx"}),
        json!({"type":"SUBAGENT_STARTED","subagentRunId":"s","name":"helper","parentToolCallId":"c"}),
        json!({"type":"SUBAGENT_FINISHED","subagentRunId":"s","outcome":{"type":"suspended","interruptIds":["i"]}}),
        json!({"type":"SUBAGENT_ERROR","subagentRunId":"s","message":"no"}),
    ];
    for event in events {
        let (back, lost) = round_trip(event.clone());
        let mut diff = Differences::default();
        differences(&event, &back, &mut String::new(), &mut diff);
        assert!(
            diff.all.is_empty(),
            "{event}\n -> {back}\n differs at {:?}",
            diff.all
        );
        assert!(lost.is_empty(), "{event}: {lost:?}");
    }
}

/// What the message has no field for is named, never dropped in silence.
#[test]
fn what_the_wire_cannot_carry_is_named() {
    let event = json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x","extra":{"a":1},
                       "timestamp":1.5});
    let encoded = encode_event(&event).unwrap();
    assert_eq!(encoded.lost, ["/extra", "/timestamp"]);
    // A number a double cannot hold exactly.
    let event = json!({"type":"CUSTOM","name":"n","value":12345678901234567891_u64});
    assert_eq!(encode_event(&event).unwrap().lost, ["/value"]);
    // A type the 1.0 wire format has no message for, and no type at all.
    assert!(encode_event(&json!({"type":"THINKING_START"})).is_err());
    assert!(encode_event(&json!({"messageId":"m"})).is_err());
    assert!(encode_event(&json!([1])).is_err());
}

/// The wire carries a number as a double. It is kept when the double holds it: its exact
/// value, or the shortest writing of that double (what a JSON encoder writes for it). Digits
/// the double cannot hold are named as rounded, whatever the number's size.
#[test]
fn a_number_is_named_exactly_when_its_double_changes_it() {
    let encode = |number: &str| {
        let text = format!(r#"{{"type":"CUSTOM","name":"n","value":{number}}}"#);
        let event: Value = serde_json::from_str(&text).unwrap();
        encode_event(&event).unwrap()
    };
    for number in [
        "9007199254740993",
        "18446744073709551615",
        "123456789012345678901234567890",
        "12345678901234567890.5",
        "0.1000000000000000055511151231257827",
        "-179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001",
    ] {
        let encoded = encode(number);
        assert_eq!(encoded.lost, ["/value"], "{number}");
        assert_eq!(encoded.rounded, ["/value"], "{number}");
    }
    for number in [
        "0",
        "-0",
        "1.50",
        "0.1",
        "1e3",
        "100000000000000000000000000000",
        "9007199254740992",
        "-9223372036854775808",
        "9223372036854775808",
        "18446744073709551616",
        "5e-324",
        "1.7976931348623157e308",
        "0.000001",
    ] {
        let encoded = encode(number);
        assert!(encoded.lost.is_empty(), "{number}: {:?}", encoded.lost);
        assert!(
            encoded.rounded.is_empty(),
            "{number}: {:?}",
            encoded.rounded
        );
    }
}

/// A field the message carries as an int64 (`timestamp`) holds every integer of its range:
/// one past 2^53 was said to be "written rounded", compared as a double, and `cat` exited 1
/// for a stream it wrote whole.
#[test]
fn an_integer_field_is_no_double() {
    for number in [
        "9007199254740993",
        "9223372036854775807",
        "-9007199254740993",
    ] {
        let text =
            format!(r#"{{"type":"RUN_STARTED","threadId":"t","runId":"r","timestamp":{number}}}"#);
        let event: Value = serde_json::from_str(&text).unwrap();
        let encoded = encode_event(&event).unwrap();
        assert!(encoded.lost.is_empty(), "{number}: {:?}", encoded.lost);
    }
}

#[test]
fn broken_messages_are_refused_with_a_reason() {
    let good = encode_event(&json!({"type":"STEP_STARTED","stepName":"s"}))
        .unwrap()
        .bytes;
    // Cut short.
    let err = decode_event(&good[..good.len() - 1]).unwrap_err();
    assert!(err.contains("runs past"), "{err}");
    // Two events of different types in one envelope.
    let mut two = good.clone();
    two.extend_from_slice(
        &encode_event(&json!({"type":"STEP_FINISHED","stepName":"s"}))
            .unwrap()
            .bytes,
    );
    assert!(
        decode_event(&two).unwrap_err().contains("2 events"),
        "{two:?}"
    );
    // Empty.
    assert!(decode_event(&[]).unwrap_err().contains("empty"));
    // An arm whose base event names another type.
    let start = json!({"type":"TEXT_MESSAGE_START","messageId":"m"});
    let end = json!({"type":"TEXT_MESSAGE_END","messageId":"m"});
    let mut wrong = encode_event(&end).unwrap().bytes;
    wrong[0] = encode_event(&start).unwrap().bytes[0];
    assert!(decode_event(&wrong).unwrap_err().contains("declares"));
    // A group (wire type 3) that never ends.
    assert!(decode_event(&[0x0b]).unwrap_err().contains("group 1"));
}

#[test]
fn an_arm_of_a_later_version_is_reported_not_refused() {
    // Field 99, length-delimited, holding an empty message.
    let bytes = [0x9a, 0x06, 0x00];
    assert_eq!(decode_event(&bytes).unwrap(), Decoded::UnknownArm(vec![99]));
}

#[test]
fn frames_are_recognised_by_their_first_bytes() {
    let mut body = Vec::new();
    push_frame(
        &encode_event(&json!({"type":"RUN_STARTED","threadId":"t","runId":"r"}))
            .unwrap()
            .bytes,
        &mut body,
    );
    assert!(looks_like_frames(&body));
    for text in [
        &b"{\"type\":1}"[..],
        b"data: {}\n\n",
        b"[]",
        b"",
        b"\0\0\0\0",
    ] {
        assert!(!looks_like_frames(text), "{text:?}");
    }
}

/// `fixtures/proto/official.pb` is what the published `@ag-ui/proto` 1.0.0 wrote for
/// `fixtures/proto/events.jsonl` (`node reference/proto.mjs encode`): agui-lens writes the
/// same bytes for the same events, and reads those bytes back as the same events.
#[test]
fn frames_agree_with_the_official_encoder() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/proto");
    let events = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    let official = std::fs::read(dir.join("official.pb")).unwrap();
    let events: Vec<Value> = events
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(events.len() >= 30);
    let mut ours = Vec::new();
    for event in &events {
        let encoded = encode_event(event).unwrap();
        assert!(encoded.lost.is_empty(), "{event}: {:?}", encoded.lost);
        push_frame(&encoded.bytes, &mut ours);
    }
    // Frame by frame, so a difference names its event.
    let (mut a, mut b) = (&ours[..], &official[..]);
    for event in &events {
        let (la, lb) = (frame_len(a), frame_len(b));
        assert_eq!(&a[..4 + la], &b[..4 + lb], "the frames of {event} differ");
        a = &a[4 + la..];
        b = &b[4 + lb..];
    }
    assert_eq!(ours, official);
    let mut at = &official[..];
    for event in &events {
        let len = frame_len(at);
        let Decoded::Event(back, _) = decode_event(&at[4..4 + len]).unwrap() else {
            panic!("{event} decodes to no event");
        };
        assert_eq!(&Value::Object(back), event);
        at = &at[4 + len..];
    }
}

fn frame_len(bytes: &[u8]) -> usize {
    u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize
}

/// A field the message carries as an optional scalar has no null on the wire: a null there is
/// left out, and named, since null and absent are not the same to every reader (1.0's
/// schemas refuse a null `parentMessageId` that an absent one passes).
#[test]
fn a_null_the_wire_cannot_carry_is_named() {
    let event = json!({"type":"TOOL_CALL_START","toolCallId":"c","toolCallName":"f",
                       "parentMessageId":null});
    let encoded = encode_event(&event).unwrap();
    assert_eq!(encoded.lost, ["/parentMessageId"]);
    assert_eq!(encoded.nulls, ["/parentMessageId"]);
    assert!(encoded.rounded.is_empty());
    // A null where the message holds any JSON value comes back.
    let event = json!({"type":"STATE_SNAPSHOT","snapshot":{"n":null}});
    assert!(encode_event(&event).unwrap().lost.is_empty());
}

/// A field: its key, then a length and the bytes (wire type 2) or a varint (wire type 0).
fn field(number: u32, wire: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3) as u8 | wire];
    if wire == 2 {
        out.push(payload.len() as u8);
    }
    out.extend_from_slice(payload);
    out
}

fn event_of(bytes: &[u8]) -> Value {
    match decode_event(bytes) {
        Ok(Decoded::Event(event, _)) => Value::Object(event),
        other => panic!("{bytes:?}: {other:?}"),
    }
}

/// What a message repeats is merged, as protobuf merges it and the official decoder does
/// (`mergeMessageFields`, then the generated decoder): an arm sent twice is one event made of
/// both, a base event sent twice one base event, and a field of a wire type its type does
/// not have is skipped as an unknown field. Two different arms stay refused, as there.
#[test]
fn what_a_message_repeats_is_merged_as_protobuf_merges_it() {
    let custom = |body: Vec<u8>| field(11, 2, &body);
    let base = |inner: &[u8]| field(1, 2, inner);
    let ty = field(1, 0, &[10]); // CUSTOM
    let name = |n: &str| field(2, 2, n.as_bytes());
    // `value`: a google.protobuf.Value holding true.
    let value_true = field(3, 2, &field(4, 0, &[1]));

    let first = custom([base(&ty), name("x"), value_true.clone()].concat());
    let second = custom([base(&ty), name("y")].concat());
    assert_eq!(
        event_of(&[first, second].concat()),
        json!({"type":"CUSTOM","name":"y","value":true})
    );

    // The base event twice: its type from the first, its timestamp from the second.
    let twice = custom([base(&ty), base(&field(2, 0, &[5])), name("x")].concat());
    assert_eq!(
        event_of(&twice),
        json!({"type":"CUSTOM","name":"x","timestamp":5})
    );

    // `name` sent again as a varint: not a string's wire type, so skipped.
    let wrong = custom([base(&ty), name("x"), field(2, 0, &[7])].concat());
    assert_eq!(event_of(&wrong), json!({"type":"CUSTOM","name":"x"}));
}

fn skips_of(bytes: &[u8]) -> Skips {
    match decode_event(bytes) {
        Ok(Decoded::Event(_, skips)) => skips,
        other => panic!("{bytes:?}: {other:?}"),
    }
}

/// Every field decoding passes over is counted, wherever it is (the envelope, the event,
/// a message inside it, a `google.protobuf.Value`), the first named; a message field sent
/// twice, whose occurrences are read again as one, counts what each skipped once.
#[test]
fn what_decoding_passes_over_is_counted() {
    let custom = |body: Vec<u8>| field(11, 2, &body);
    let base = |inner: &[u8]| field(1, 2, inner);
    let ty = field(1, 0, &[10]); // CUSTOM
    let name = |n: &str| field(2, 2, n.as_bytes());
    let unknown = field(15, 0, &[7]);
    let plain = custom([base(&ty), name("x")].concat());
    assert_eq!(skips_of(&plain), Skips::default());

    let in_event = custom([base(&ty), name("x"), unknown.clone()].concat());
    let skips = skips_of(&in_event);
    assert_eq!(skips.count, 1);
    let first = skips.first.unwrap();
    assert_eq!(
        (first.message, first.number, first.wire, first.known),
        ("ag_ui.CustomEvent", 15, 0, None)
    );
    assert_eq!(first.to_string(), "field 15 of ag_ui.CustomEvent");
    // What was read is the event without it.
    assert_eq!(event_of(&in_event), json!({"type":"CUSTOM","name":"x"}));

    // Beside the arm in the envelope (field 99, a varint: its key takes two bytes), in the
    // base event, in a Value.
    let in_envelope = [plain.clone(), vec![0x98, 0x06, 7]].concat();
    let first = skips_of(&in_envelope).first.unwrap();
    assert_eq!((first.message, first.number), ("ag_ui.Event", 99));
    let in_base = custom([base(&[ty.clone(), unknown.clone()].concat()), name("x")].concat());
    assert_eq!(skips_of(&in_base).first.unwrap().message, "ag_ui.BaseEvent");
    let in_value = custom([base(&ty), name("x"), field(3, 2, &unknown)].concat());
    assert_eq!(
        skips_of(&in_value).first.unwrap().message,
        "google.protobuf.Value"
    );

    // A known field in a wire type its type does not have: named as the field it is.
    let wrong = custom([base(&ty), name("x"), field(2, 0, &[7])].concat());
    let first = skips_of(&wrong).first.unwrap();
    assert_eq!(first.known, Some("name"));
    assert_eq!(
        first.to_string(),
        "field 2 (`name`) of ag_ui.CustomEvent in wire type 0, which its type does not have"
    );

    // The base event twice, each with a field passed over: two, not three.
    let twice = custom(
        [
            base(&[ty.clone(), unknown.clone()].concat()),
            base(&[field(2, 0, &[5]), field(14, 0, &[1])].concat()),
            name("x"),
        ]
        .concat(),
    );
    let skips = skips_of(&twice);
    assert_eq!(skips.count, 2);
    assert_eq!(skips.first.unwrap().number, 15);
}

/// A group (wire type 3, deprecated) the definitions do not have is passed over to its end,
/// as the official decoder passes over it, and counted; one that never ends, or ends as
/// another, does not decode. A field number past 2^29 - 1 is no protobuf at all.
#[test]
fn a_group_is_passed_over_and_a_field_number_past_the_limit_refused() {
    let custom = |body: Vec<u8>| field(11, 2, &body);
    let base = |inner: &[u8]| field(1, 2, inner);
    let ty = field(1, 0, &[10]); // CUSTOM
    let name = |n: &str| field(2, 2, n.as_bytes());
    // Group 12: start (12 << 3 | 3), a varint field 1 inside, end (12 << 3 | 4).
    let group = [vec![0x63], field(1, 0, &[5]), vec![0x64]].concat();
    let with_group = custom([base(&ty), name("x"), group.clone()].concat());
    assert_eq!(event_of(&with_group), json!({"type":"CUSTOM","name":"x"}));
    let skips = skips_of(&with_group);
    assert_eq!((skips.count, skips.first.unwrap().number), (1, 12));
    let unended = custom([base(&ty), name("x"), vec![0x63], field(1, 0, &[5])].concat());
    assert!(decode_event(&unended).is_err());
    let crossed = custom([base(&ty), name("x"), vec![0x63, 0x6c]].concat());
    assert!(decode_event(&crossed).is_err());
    // A key past 32 bits (F8 FF FF FF FF 0F: field 2^37 - 1, which a 32-bit reading took
    // for 2^32 - 1), a varint.
    let past = custom(
        [
            base(&ty),
            name("x"),
            vec![0xF8, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 1],
        ]
        .concat(),
    );
    let err = decode_event(&past).unwrap_err();
    assert!(err.contains("field number"), "{err}");
}

/// A length-delimited field with a length of any size (the tests' `field` takes one byte).
fn long_field(number: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    prost::encoding::encode_key(number, prost::encoding::WireType::LengthDelimited, &mut out);
    prost::encoding::encode_varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

/// Groups or values nested past what the official decoders take do not decode, and nothing
/// recurses on them: 100,000 nested groups in one frame ran the stack out (the process
/// aborted). Nested as deep as a real value is, they decode.
#[test]
fn nesting_past_the_limit_is_refused_not_followed_down() {
    let custom = |body: Vec<u8>| long_field(11, &body);
    let base = |inner: &[u8]| field(1, 2, inner);
    let ty = field(1, 0, &[10]); // CUSTOM
    let name = |n: &str| field(2, 2, n.as_bytes());
    let groups = |depth: usize| {
        [vec![0x63; depth], vec![0x64; depth]].concat() // group 12, opened and closed
    };
    let shallow = custom([base(&ty), name("x"), groups(10)].concat());
    assert_eq!(skips_of(&shallow).count, 1);
    let deep = custom([base(&ty), name("x"), groups(100_000)].concat());
    let err = decode_event(&deep).unwrap_err();
    assert!(err.contains("nest deeper"), "{err}");

    // `value`: a Value holding a list holding a Value … holding true.
    let values = |depth: usize| {
        let mut value = field(4, 0, &[1]);
        for _ in 0..depth {
            value = long_field(6, &long_field(1, &value));
        }
        value
    };
    let fine = custom([base(&ty), name("x"), long_field(3, &values(20))].concat());
    let mut expected = json!(true);
    for _ in 0..20 {
        expected = json!([expected]);
    }
    assert_eq!(event_of(&fine)["value"], expected);
    let deep = custom([base(&ty), name("x"), long_field(3, &values(50_000))].concat());
    let err = decode_event(&deep).unwrap_err();
    assert!(err.contains("nest deeper"), "{err}");
}

/// A field the JSON event leaves out that the message cannot leave out (a list, a string, an
/// object it always carries) reads back with a value: named with what it reads back as,
/// since a required field left out is a schema error the copy would hide. The run input's
/// optional lists (`tools`, `context`, `resume`), empty, mean what their absence means.
#[test]
fn a_field_the_wire_fills_in_is_named() {
    for (event, path, value) in [
        (
            json!({"type":"TOOL_CALL_RESULT","messageId":"m","toolCallId":"c"}),
            "/content",
            "[]",
        ),
        (json!({"type":"MESSAGES_SNAPSHOT"}), "/messages", "[]"),
        (json!({"type":"STATE_DELTA"}), "/delta", "[]"),
        (
            json!({"type":"TEXT_MESSAGE_CONTENT","messageId":"m"}),
            "/delta",
            "\"\"",
        ),
        (
            json!({"type":"RUN_FINISHED","threadId":"t","runId":"r",
                   "outcome":{"type":"interrupt"}}),
            "/outcome/interrupts",
            "[]",
        ),
        (
            json!({"type":"RUN_STARTED","threadId":"t","runId":"r",
                   "input":{"threadId":"t","runId":"r","tools":[],"context":[]}}),
            "/input/messages",
            "[]",
        ),
    ] {
        let encoded = encode_event(&event).unwrap();
        assert_eq!(encoded.lost, [path], "{event}");
        assert_eq!(
            encoded.added,
            [(path.to_owned(), value.to_owned())],
            "{event}"
        );
    }
    let event = json!({"type":"RUN_STARTED","threadId":"t","runId":"r",
                       "input":{"threadId":"t","runId":"r","messages":[]}});
    let encoded = encode_event(&event).unwrap();
    assert!(encoded.lost.is_empty(), "{:?}", encoded.lost);
}

/// A timestamp written as an integral number in another form (`1.0`, `1e3`) is the integer it
/// means, and goes on the wire as one; one with a fraction has no place there.
#[test]
fn an_integral_timestamp_in_any_form_is_carried() {
    for (written, carried) in [
        ("1.0", 1),
        ("1e3", 1000),
        ("1700000000000", 1_700_000_000_000i64),
    ] {
        let event: Value = serde_json::from_str(&format!(
            r#"{{"type":"STEP_STARTED","stepName":"s","timestamp":{written}}}"#
        ))
        .unwrap();
        let encoded = encode_event(&event).unwrap();
        assert!(encoded.lost.is_empty(), "{written}: {:?}", encoded.lost);
        let Decoded::Event(back, _) = decode_event(&encoded.bytes).unwrap() else {
            panic!("{written}: no event");
        };
        assert_eq!(back["timestamp"].as_i64(), Some(carried), "{written}");
    }
    let event = json!({"type":"STEP_STARTED","stepName":"s","timestamp":1.5});
    assert_eq!(encode_event(&event).unwrap().lost, ["/timestamp"]);
}
