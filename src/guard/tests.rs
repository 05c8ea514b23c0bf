//! The guard's rules, one by one, as a model that obeys every instruction it reads would meet
//! them (the whole loop with such a model is in `tests/agent_loop.rs`).

use super::*;
use crate::message::Said;

fn click(name: &str) -> Said {
    Said::new("do_click", format!("click {name}"), [name])
}

fn button(name: &str, url: &str) -> ActFacts {
    ActFacts {
        tag: "button".into(),
        input_type: "submit".into(),
        name: name.into(),
        document_url: url.into(),
        ..ActFacts::default()
    }
}

fn check(guard: &Guard, guarded: &Guarded, facts: Option<&ActFacts>, page_url: &str) -> Verdict {
    let said = click("it");
    guard.check(&Check { guarded, described: &said, facts, page_url, allowed_once: &[] })
}

fn asked(verdict: Verdict) -> Consent {
    match verdict {
        Verdict::Ask(consent) => *consent,
        other => panic!("expected a question, got {other:?}"),
    }
}

const MAIL: &str = "https://mail.example.com/inbox";

/// One of every consent the guard asks, for the messages' tests.
pub(crate) fn samples() -> Vec<Consent> {
    let mut guard = Guard::new(SitePolicy::Ask, &[], MAIL, "Sort my mail");
    guard.note_read(MAIL, "Order ACME-4471 shipped");
    let open = |url: &str| Guarded::Open { url: url.into() };
    let typed = |text: &str| Guarded::Element { index: 1, how: ElementAct::Type, text: Some(text.into()) };
    let mut out = vec![
        asked(check(&guard, &open("https://evil.example/"), None, MAIL)),
        asked(check(&guard, &open("https://mail.example.com/f/setup.exe"), None, MAIL)),
        asked(check(&guard, &Guarded::Script, None, MAIL)),
    ];
    let mut evil = guard.clone();
    evil.scope.read.insert("evil.example".into());
    out.push(asked(check(&evil, &open("https://evil.example/x?d=ACME-4471"), None, MAIL)));
    let forum = button("Go", "https://forum.example/t/1");
    out.push(asked(check(&guard, &typed("x"), Some(&forum), MAIL)));
    let mut reading = guard.clone();
    reading.scope.read.insert("forum.example".into());
    out.push(asked(check(&reading, &typed("x"), Some(&forum), MAIL)));
    reading.scope.act.insert("forum.example".into());
    out.push(asked(check(&reading, &typed("ACME-4471"), Some(&forum), MAIL)));
    for name in ["Send", "Delete"] {
        out.push(asked(check(
            &guard,
            &Guarded::Element { index: 1, how: ElementAct::Click, text: None },
            Some(&button(name, MAIL)),
            MAIL,
        )));
    }
    for facts in [
        ActFacts { value: "Pay".into(), ..button("", MAIL) },
        ActFacts { title: "Delete".into(), ..button("", MAIL) },
        ActFacts { text: "Buy now".into(), ..button("Details", MAIL) },
    ] {
        out.push(asked(check(
            &guard,
            &Guarded::Element { index: 1, how: ElementAct::Click, text: None },
            Some(&facts),
            MAIL,
        )));
    }
    let form = |fields: Vec<FieldFacts>, action: &str, submitter: &str| ActFacts {
        submits: true,
        form: Some(FormFacts {
            action: action.into(),
            method: "post".into(),
            submitter: submitter.into(),
            fields,
            more_fields: 0,
        }),
        ..button("Go", MAIL)
    };
    let field = |t: &str| FieldFacts { input_type: t.into(), filled: true, ..FieldFacts::default() };
    let card = FieldFacts { autocomplete: "cc-number".into(), ..FieldFacts::default() };
    for facts in [
        form(vec![field("password")], "https://mail.example.com/login", "Go"),
        form(vec![card], "https://mail.example.com/f", "Go"),
        form(vec![field("file")], "https://mail.example.com/f", "Go"),
        form(vec![], "https://mail.example.com/checkout", "Go"),
        form(vec![], "https://mail.example.com/f", "Send"),
        ActFacts {
            form: Some(FormFacts { more_fields: 300, ..FormFacts::default() }),
            ..form(vec![], "https://mail.example.com/f", "Go")
        },
    ] {
        out.push(asked(check(
            &guard,
            &Guarded::Element { index: 1, how: ElementAct::Click, text: None },
            Some(&facts),
            MAIL,
        )));
    }
    out.push(asked(guard.check_page("https://elsewhere.example/")));
    let elsewhere = |value: &str| ActFacts {
        form: Some(FormFacts {
            action: "https://evil.example/collect".into(),
            fields: vec![FieldFacts { value: value.into(), ..FieldFacts::default() }],
            ..FormFacts::default()
        }),
        ..button("Join", MAIL)
    };
    let join = Guarded::Element { index: 1, how: ElementAct::Click, text: None };
    out.push(asked(check(&guard, &join, Some(&elsewhere("x")), MAIL)));
    out.push(asked(check(&evil_acting(&guard), &join, Some(&elsewhere("ACME-4471")), MAIL)));
    out
}

fn evil_acting(guard: &Guard) -> Guard {
    let mut guard = guard.clone();
    guard.scope.read.insert("evil.example".into());
    guard.scope.act.insert("evil.example".into());
    guard
}

#[test]
fn a_task_acts_freely_where_the_person_sent_it() {
    let guard =
        Guard::new(SitePolicy::Ask, &[], MAIL, "Archive the newsletters, then look up the weather on weather.example");
    let page = MAIL;
    let click_it = Guarded::Element { index: 4, how: ElementAct::Click, text: None };
    assert_eq!(check(&guard, &click_it, Some(&button("Next page", page)), page), Verdict::Go);
    assert_eq!(
        check(&guard, &Guarded::Open { url: "https://www.weather.example/today".into() }, None, page),
        Verdict::Go
    );
    let typed = Guarded::Element { index: 2, how: ElementAct::Type, text: Some("newsletter".into()) };
    assert_eq!(check(&guard, &typed, Some(&button("Search", page)), page), Verdict::Go);
    assert_eq!(check(&guard, &Guarded::Read, None, page), Verdict::Go);
}

#[test]
fn a_new_site_is_asked_for_reading_and_again_for_acting() {
    let mut guard = Guard::new(SitePolicy::Ask, &[], MAIL, "Sort my mail");
    let consent = asked(check(&guard, &Guarded::Open { url: "https://booking.com/hotels".into() }, None, MAIL));
    assert_eq!(
        (consent.kind, consent.site.as_str(), consent.act.as_str()),
        (ConsentKind::NewSite, "booking.com", "Open booking.com")
    );
    assert!(consent.choices.contains(&ConsentAnswer::Always));
    // A link there is reading there.
    let link = ActFacts {
        tag: "a".into(),
        name: "Hotels".into(),
        href: "https://www.booking.com/".into(),
        document_url: MAIL.into(),
        ..ActFacts::default()
    };
    let click_link = Guarded::Element { index: 3, how: ElementAct::Click, text: None };
    assert_eq!(asked(check(&guard, &click_link, Some(&link), MAIL)).site, "booking.com");
    // Allowed for the task: reading there goes on; acting there asks.
    assert!(guard.answered(&consent, ConsentAnswer::AllowForTask));
    assert_eq!(guard.check_page("https://www.booking.com/"), Verdict::Go);
    let typed = Guarded::Element { index: 2, how: ElementAct::Type, text: Some("Lisbon".into()) };
    let field =
        ActFacts { tag: "input".into(), document_url: "https://www.booking.com/".into(), ..ActFacts::default() };
    let act = asked(check(&guard, &typed, Some(&field), "https://www.booking.com/"));
    assert_eq!(act.reason, "this task may read booking.com but not act on it");
    assert!(guard.answered(&act, ConsentAnswer::AllowForTask));
    assert_eq!(check(&guard, &typed, Some(&field), "https://www.booking.com/"), Verdict::Go);
    // Denied: not allowed, and nothing changes.
    let other = asked(check(&guard, &Guarded::Open { url: "https://evil.example/".into() }, None, MAIL));
    assert!(!guard.answered(&other, ConsentAnswer::Deny));
    assert!(matches!(
        check(&guard, &Guarded::Open { url: "https://evil.example/".into() }, None, MAIL),
        Verdict::Ask(_)
    ));
}

#[test]
fn a_form_sent_to_another_site_asks_for_that_site_and_for_the_data_it_carries() {
    let mut guard = Guard::new(SitePolicy::Ask, &[], MAIL, "Tidy my inbox");
    guard.note_read(MAIL, "Your order ACME-4471 shipped to 12 Elm Street.");
    let form = |value: &str| FormFacts {
        action: "https://evil.example/collect".into(),
        method: "get".into(),
        fields: vec![FieldFacts {
            input_type: "text".into(),
            value: value.into(),
            filled: true,
            ..FieldFacts::default()
        }],
        ..FormFacts::default()
    };
    // A neutral button: no word holds it; where its form goes does.
    let join = ActFacts { form: Some(form("12 Elm Street")), ..button("Join", MAIL) };
    let press = Guarded::Element { index: 2, how: ElementAct::Click, text: None };
    let consent = asked(check(&guard, &press, Some(&join), MAIL));
    assert_eq!((consent.kind, consent.site.as_str()), (ConsentKind::NewSite, "evil.example"));
    assert_eq!(consent.reason, "it sends a form to evil.example, which is not among the sites of this task");
    // Allowed once: what the form carries is asked next.
    let said = click("Join");
    let once = [(ConsentKind::NewSite, "evil.example".to_string())];
    let data = guard.check(&Check {
        guarded: &press,
        described: &said,
        facts: Some(&join),
        page_url: MAIL,
        allowed_once: &once,
    });
    let data = asked(data);
    assert_eq!(data.kind, ConsentKind::DataCrossing);
    assert!(data.act.ends_with("to evil.example in a form"), "{}", data.act);
    // Enter in the form's field is the same act.
    let field = ActFacts {
        tag: "input".into(),
        submits: true,
        form: Some(form("ACME-4471")),
        document_url: MAIL.into(),
        ..ActFacts::default()
    };
    assert_eq!(
        asked(check(&guard, &Guarded::Keys { text: "Enter".into(), enter: true }, Some(&field), MAIL)).site,
        "evil.example"
    );
    // A form on its own site goes on; so does one to a site the task acts on, with its own words.
    let home = ActFacts {
        form: Some(FormFacts { action: "https://mail.example.com/search".into(), ..form("ACME-4471") }),
        ..button("Search", MAIL)
    };
    assert_eq!(check(&guard, &press, Some(&home), MAIL), Verdict::Go);
    let acting = evil_acting(&guard);
    assert_eq!(
        check(&acting, &press, Some(&ActFacts { form: Some(form("Tidy my inbox")), ..button("Join", MAIL) }), MAIL),
        Verdict::Go
    );
    let listed = Guard { scope: Scope { policy: SitePolicy::Listed, ..guard.scope.clone() }, ..guard.clone() };
    assert!(matches!(check(&listed, &press, Some(&join), MAIL), Verdict::Refuse(_)));
}

#[test]
fn a_search_engine_is_read_freely_but_not_acted_on() {
    let mut guard = Guard::new(SitePolicy::Ask, &[], MAIL, "");
    guard.note_read(MAIL, "Order ACME-4471 shipped");
    guard.allow_reading_freely("https://duckduckgo.com/?q=");
    let search = Guarded::Open { url: "https://duckduckgo.com/?q=ACME-4471".into() };
    assert_eq!(check(&guard, &search, None, MAIL), Verdict::Go);
    let field = ActFacts { document_url: "https://duckduckgo.com/".into(), ..ActFacts::default() };
    let typed = Guarded::Element { index: 1, how: ElementAct::Type, text: Some("x".into()) };
    assert_eq!(asked(check(&guard, &typed, Some(&field), "https://duckduckgo.com/")).kind, ConsentKind::NewSite);
}

#[test]
fn a_yes_once_is_for_its_site_and_its_kind_only() {
    let mut guard = Guard::new(SitePolicy::Ask, &[], MAIL, "");
    guard.scope.visiting = Some("news.example".into());
    let page = "https://news.example/story";
    let link = ActFacts {
        tag: "a".into(),
        name: "More".into(),
        href: "https://evil.example/".into(),
        document_url: page.into(),
        ..ActFacts::default()
    };
    let follow = Guarded::Element { index: 1, how: ElementAct::Click, text: None };
    let said = click("More");
    let ask = |once: &[(ConsentKind, String)]| {
        guard.check(&Check {
            guarded: &follow,
            described: &said,
            facts: Some(&link),
            page_url: page,
            allowed_once: once,
        })
    };
    // Reading the link's site, then acting on the page it is on: two questions, each its own.
    assert_eq!(asked(ask(&[])).site, "evil.example");
    let read_once = [(ConsentKind::NewSite, "evil.example".to_string())];
    let act = asked(ask(&read_once));
    assert_eq!(
        (act.site.as_str(), act.reason.as_str()),
        ("news.example", "this task may read news.example but not act on it")
    );
    let both = [read_once[0].clone(), (ConsentKind::NewSite, "news.example".to_string())];
    assert_eq!(ask(&both), Verdict::Go);
}

#[test]
fn a_visit_allowed_once_is_one_visit() {
    let mut guard = Guard::new(SitePolicy::Ask, &[], MAIL, "");
    let consent = asked(guard.check_page("https://news.example/story"));
    assert!(guard.answered(&consent, ConsentAnswer::AllowOnce));
    assert_eq!(guard.check_page("https://news.example/story"), Verdict::Go);
    assert_eq!(guard.check_page(MAIL), Verdict::Go);
    assert!(matches!(guard.check_page("https://news.example/story"), Verdict::Ask(_)));
}

#[test]
fn the_settings_choices_for_other_sites() {
    let listed = Guard::new(SitePolicy::Listed, &["shop.example".into()], MAIL, "");
    assert!(matches!(
        check(&listed, &Guarded::Open { url: "https://evil.example/".into() }, None, MAIL),
        Verdict::Refuse(_)
    ));
    assert_eq!(check(&listed, &Guarded::Open { url: "https://www.shop.example/".into() }, None, MAIL), Verdict::Go);
    let mut listed = listed;
    assert!(matches!(listed.check_page("https://evil.example/"), Verdict::Refuse(_)));
    let free = Guard::new(SitePolicy::Free, &[], MAIL, "");
    assert_eq!(check(&free, &Guarded::Open { url: "https://evil.example/".into() }, None, MAIL), Verdict::Go);
    // Free to go anywhere, but what cannot be undone still waits for a yes.
    let buy = Guarded::Element { index: 1, how: ElementAct::Click, text: None };
    assert_eq!(
        asked(check(&free, &buy, Some(&button("Buy now", "https://evil.example/")), MAIL)).kind,
        ConsentKind::HeldAct
    );
}

#[test]
fn held_acts_wait_for_a_yes_and_can_be_allowed_for_the_task_on_one_site() {
    let mut guard = Guard::new(SitePolicy::Ask, &[], "https://shop.example/cart", "Buy the kettle");
    let buy = Guarded::Element { index: 1, how: ElementAct::Click, text: None };
    let place = button("Place order", "https://shop.example/cart");
    let consent = asked(check(&guard, &buy, Some(&place), "https://shop.example/cart"));
    assert_eq!(consent.kind, ConsentKind::HeldAct);
    assert_eq!(consent.act, "click it on shop.example");
    assert_eq!(consent.reason, "its name says \"place order\"");
    // Once: this act only.
    assert!(guard.answered(&consent, ConsentAnswer::AllowOnce));
    assert!(matches!(check(&guard, &buy, Some(&place), "https://shop.example/cart"), Verdict::Ask(_)));
    // Such acts on this site, for the task; not on another.
    assert!(guard.answered(&consent, ConsentAnswer::AllowForTask));
    assert_eq!(check(&guard, &buy, Some(&place), "https://shop.example/cart"), Verdict::Go);
    guard.scope.act.insert("other.example".into());
    assert!(matches!(
        check(&guard, &buy, Some(&button("Pay", "https://other.example/")), "https://other.example/"),
        Verdict::Ask(_)
    ));
    // Enter in a field sends its form: held as its button would be.
    let enter = Guarded::Keys { text: "Enter".into(), enter: true };
    let field = ActFacts {
        tag: "input".into(),
        submits: true,
        document_url: "https://other.example/".into(),
        form: Some(FormFacts { submitter: "Send".into(), ..FormFacts::default() }),
        ..ActFacts::default()
    };
    assert_eq!(asked(check(&guard, &enter, Some(&field), "https://other.example/")).kind, ConsentKind::HeldAct);
    // A script is held, whatever it says it does.
    assert_eq!(
        asked(check(&guard, &Guarded::Script, None, "https://other.example/")).reason,
        "a script can do anything on the page"
    );
}

/// A choice in a dropdown can end in real clicks on the control and the option: a control
/// whose facts say "Place order", or an option that says "Delete account", waits for a yes as a
/// click would; an ordinary choice does not.
#[test]
fn a_choice_is_held_by_its_control_and_its_option_as_a_click_is() {
    let guard = Guard::new(SitePolicy::Ask, &[], "https://shop.example/cart", "Choose the size");
    let choose = |text: &str| Guarded::Element { index: 1, how: ElementAct::Choose, text: Some(text.into()) };
    let control = button("Size", "https://shop.example/cart");
    assert_eq!(check(&guard, &choose("Large"), Some(&control), "https://shop.example/cart"), Verdict::Go);
    let consent = asked(check(&guard, &choose("Delete account"), Some(&control), "https://shop.example/cart"));
    assert_eq!(consent.kind, ConsentKind::HeldAct);
    assert_eq!(consent.reason, "its text says \"delete\"");
    let buy = button("Place order", "https://shop.example/cart");
    assert_eq!(
        asked(check(&guard, &choose("Large"), Some(&buy), "https://shop.example/cart")).kind,
        ConsentKind::HeldAct
    );
}

#[test]
fn a_log_in_with_the_persons_own_secret_is_theirs() {
    let mut guard = Guard::new(SitePolicy::Ask, &[], "https://bank.example/login", "Log in");
    let form = FormFacts {
        action: "https://bank.example/session".into(),
        fields: vec![FieldFacts { input_type: "password".into(), filled: true, ..FieldFacts::default() }],
        ..FormFacts::default()
    };
    let submit = ActFacts { submits: true, form: Some(form), ..button("Log in", "https://bank.example/login") };
    let go = Guarded::Element { index: 1, how: ElementAct::Click, text: None };
    assert!(matches!(check(&guard, &go, Some(&submit), "https://bank.example/login"), Verdict::Ask(_)));
    guard.secret_sites.insert("bank.example".into());
    assert_eq!(check(&guard, &go, Some(&submit), "https://bank.example/login"), Verdict::Go);
}

#[test]
fn data_read_on_one_site_waits_before_it_goes_to_another() {
    let mut guard = Guard::new(SitePolicy::Ask, &[], MAIL, "Summarise my order mail");
    guard.note_read(MAIL, "Your order ACME-4471 was paid with card ending 3391.");
    guard.scope.act.insert("forum.example".into());
    guard.scope.read.insert("forum.example".into());
    let field =
        ActFacts { tag: "textarea".into(), document_url: "https://forum.example/new".into(), ..ActFacts::default() };
    let typed = Guarded::Element { index: 5, how: ElementAct::Type, text: Some("my order is ACME-4471".into()) };
    let consent = asked(check(&guard, &typed, Some(&field), "https://forum.example/new"));
    assert_eq!(consent.kind, ConsentKind::DataCrossing);
    assert_eq!(consent.act, "Type \u{201c}my order is ACME-4471\u{201d}, read on example.com, into forum.example");
    assert_eq!(consent.choices, [ConsentAnswer::AllowOnce, ConsentAnswer::Deny]);
    // In an address: the query's escapes are read.
    guard.scope.read.insert("evil.example".into());
    let url = Guarded::Open { url: "https://evil.example/c?d=ACME%2D4471&x=card+ending+3391".into() };
    assert_eq!(asked(check(&guard, &url, None, MAIL)).act_locale_text.key, "consent_data_address");
    // The person's own words and a secret's placeholder cross nothing.
    let own = Guarded::Element { index: 5, how: ElementAct::Type, text: Some("Summarise my order mail".into()) };
    assert_eq!(check(&guard, &own, Some(&field), "https://forum.example/new"), Verdict::Go);
    let secret = Guarded::Element { index: 5, how: ElementAct::Type, text: Some("<secret>pw</secret>".into()) };
    assert_eq!(check(&guard, &secret, Some(&field), "https://forum.example/new"), Verdict::Go);
    // A frame of another site inside the page is that site.
    let framed = ActFacts { document_url: "https://evil.example/frame".into(), ..field.clone() };
    assert_eq!(asked(check(&guard, &typed, Some(&framed), MAIL)).site, "evil.example");
}

#[test]
fn the_guard_survives_a_restart_as_it_was() {
    let mut guard = Guard::new(SitePolicy::Ask, &["shop.example".into()], MAIL, "Sort my mail");
    guard.note_read(MAIL, "Order ACME-4471 shipped");
    guard.held_allowed.insert("shop.example".into());
    guard.last_id = 7;
    guard.ledger.saved_whole();
    let text = serde_json::to_string(&guard).unwrap();
    let read = Guard::from_value(&crate::json::from_text(&text).unwrap()).unwrap();
    assert_eq!(Guard::from_value(&serde_json::json!({"scope": {}})), None);
    assert_eq!(read, guard);
    let field = ActFacts { document_url: "https://www.shop.example/".into(), ..ActFacts::default() };
    let typed = Guarded::Element { index: 1, how: ElementAct::Type, text: Some("ACME-4471".into()) };
    assert_eq!(asked(check(&read, &typed, Some(&field), MAIL)).kind, ConsentKind::DataCrossing);
}

#[test]
fn every_sample_consent_has_its_messages() {
    let kinds: std::collections::BTreeSet<_> = samples().iter().map(|c| c.act_locale_text.key.clone()).collect();
    for key in ["consent_open", "consent_stay_on", "consent_act_on", "consent_data_field", "consent_data_address"] {
        assert!(kinds.contains(key), "{key}");
    }
}
