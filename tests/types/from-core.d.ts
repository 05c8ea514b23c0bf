// Generated from from-core.schema.json by scripts/lib/js-types.mjs: do not edit.

/**
 * The direct answer to a request.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "PanelReply".
 */
export type PanelReply =
  | {
      type: 'accepted';
      v: number;
    }
  | {
      type: 'task_accepted';
      v: number;
      task_id: string;
      queued: boolean;
    }
  | {
      type: 'refused';
      v: number;
      message: string;
      locale_text?: LocaleText | null;
      /**
       * The stored setting at fault (`llm.model`), when a setting is: the options page
       * marks its field.
       */
      setting?: string | null;
    }
  | {
      type: 'status';
      v: number;
      task_id: string | null;
      running: boolean;
      from: number;
      events: AgentEvent[];
      /**
       * Where the task stands after all its events (none without a task).
       */
      state?: TaskState | null;
      /**
       * The longest task text the core takes, for the task box's count.
       */
      task_max_chars: number;
      tasks: TaskSummary[];
      /**
       * Coding agents waiting for the person's answer (`crate::bridge`).
       */
      clients_asking?: ClientAsking[];
    }
  | {
      type: 'connection_works';
      v: number;
      model: string;
      ms: number;
      input_tokens: number;
      output_tokens: number;
    }
  | {
      type: 'models';
      v: number;
      models: string[];
      listed: boolean;
    }
  | {
      type: 'settings_lists';
      v: number;
      extra_headers: {
        [k: string]: string | undefined;
      };
      prices: ModelPrice[];
    }
  | {
      type: 'skill_draft';
      v: number;
      domain: string;
      params: Suggested[];
    }
  | {
      type: 'skill_saved';
      v: number;
      name: string;
      action: string;
      domain: string;
    }
  | {
      type: 'secret_saved';
      v: number;
      name: string;
    }
  | {
      type: 'clients';
      v: number;
      /**
       * Coding agents may connect (the options' switch; on unless turned off).
       */
      enabled: boolean;
      /**
       * A client's running tasks stop when it disconnects (else they go on in the panel).
       */
      stop_on_disconnect: boolean;
      clients: ClientEntry[];
      asking: ClientAsking[];
    }
  | {
      type: 'schedules';
      v: number;
      schedules: Schedule[];
      left_out: string[];
    };
/**
 * A way to set right what a message tells of.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "Remedy".
 */
export type Remedy = 'open_settings';
/**
 * What a running task reports, in order.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "AgentEvent".
 */
export type AgentEvent =
  | {
      type: 'task_started';
      v: number;
      task_id: string;
      task: string;
      max_steps: number;
      /**
       * The model the settings name (a step may have used the fallback model instead).
       */
      model: string;
      /**
       * The conversation (chat) the task belongs to: the id of its first task. A follow-up
       * carries its conversation's id; the history lists tasks by it.
       */
      conversation_id: string;
      /**
       * A replay of saved steps: no model is asked, and each step's evaluation says how
       * its elements were found again (worth showing from step 1 on).
       */
      replay: boolean;
      /**
       * A schedule started it, not the person (`crate::schedule`).
       */
      scheduled: boolean;
    }
  | {
      type: 'step_started';
      v: number;
      step: number;
      max_steps: number;
    }
  | {
      type: 'step_planned';
      v: number;
      step: number;
      thoughts: ModelThoughts;
      actions: PlannedAction[];
    }
  | {
      type: 'task_restored';
      v: number;
      step: number;
      steps_kept: number;
      reason: string;
    }
  | {
      type: 'task_paused';
      v: number;
      step: number;
    }
  | {
      type: 'task_resumed';
      v: number;
      step: number;
    }
  | {
      type: 'question_asked';
      v: number;
      step: number;
      question: string;
    }
  | {
      type: 'question_answered';
      v: number;
      step: number;
      answer: string;
    }
  | {
      type: 'consent_asked';
      v: number;
      step: number;
      consent: Consent;
    }
  | {
      type: 'consent_answered';
      v: number;
      step: number;
      id: number;
      site: string;
      answer: ConsentAnswer;
    }
  | {
      type: 'history_compacted';
      v: number;
      step: number;
      summary: HistorySummary;
    }
  | {
      type: 'step_finished';
      v: number;
      record: StepRecord;
    }
  | {
      type: 'task_finished';
      v: number;
      end: TaskEnd;
      steps: number;
      usage: Usage;
      /**
       * USD, when the price table knows the model.
       */
      cost_usd?: number | null;
    };
/**
 * What a consent is about.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ConsentKind".
 */
export type ConsentKind = 'new_site' | 'held_act' | 'data_crossing';
/**
 * The person's answer.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ConsentAnswer".
 */
export type ConsentAnswer = ('allow_once' | 'deny') | 'allow_for_task' | 'always';
/**
 * How a task ended.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "TaskEnd".
 */
export type TaskEnd =
  | {
      kind: 'done';
      text: string;
      success: boolean;
      data?: unknown;
    }
  | {
      kind: 'stopped';
    }
  | {
      kind: 'step_limit';
      max_steps: number;
    }
  | {
      kind: 'too_many_failures';
      failures: number;
      last_error: string;
      last_error_locale_text?: LocaleText | null;
    }
  | {
      kind: 'error';
      message: string;
      locale_text?: LocaleText | null;
    };
/**
 * Where a task stands, for the list of tasks.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "TaskStatus".
 */
export type TaskStatus = ('queued' | 'running' | 'paused' | 'succeeded' | 'failed' | 'stopped') | 'waiting';
/**
 * What a schedule runs.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ScheduledWork".
 */
export type ScheduledWork =
  | {
      kind: 'task';
      task: string;
      /**
       * The page it starts on, in a new tab; none: a new tab.
       */
      start_url?: string | null;
      /**
       * A JSON Schema the task's result is data of, as the panel's start takes it.
       */
      output_schema?: {
        [k: string]: unknown | undefined;
      };
    }
  | {
      kind: 'replay';
      start_url: string;
      steps: unknown[];
    }
  | {
      kind: 'skill';
      name: string;
      params: {
        [k: string]: unknown | undefined;
      };
    };
/**
 * When a schedule runs. Times of day are the local wall clock's `"HH:MM"` (24-hour).
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "Repeat".
 */
export type Repeat =
  | {
      every: 'minutes';
      n: number;
    }
  | {
      every: 'hourly';
      minute: number;
    }
  | {
      every: 'daily';
      at: string;
    }
  | {
      every: 'weekdays';
      at: string;
    };
/**
 * Requests the worker sends to the content script of one frame. Indices are the frame's own
 * (local) indices.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ContentRequest".
 */
export type ContentRequest =
  | {
      type: 'snapshot';
      v: number;
      viewport_expansion: number;
      screen: ScreenRegion | null;
      worker: string;
    }
  | {
      type: 'drag';
      v: number;
      index: number;
      to_index: number | null;
      /**
       * @minItems 2
       * @maxItems 2
       */
      to_point: [unknown, unknown] | null;
    }
  | {
      type: 'upload';
      v: number;
      index: number;
      name: string;
      mime: string;
      data: string;
    }
  | {
      type: 'highlight';
      v: number;
      labels: [unknown, unknown][];
    }
  | {
      type: 'draw_highlights_now';
      v: number;
    }
  | {
      type: 'clear_highlights';
      v: number;
    }
  | {
      type: 'task_over';
      v: number;
    }
  | {
      type: 'click';
      v: number;
      index: number;
      read_after?: ReadAfter | null;
      /**
       * The element's facts as checked (`act_facts`' JSON text): the page refuses the click
       * if they changed, and sends no other form while it runs (`crate::guard`).
       */
      expect?: string | null;
    }
  | {
      type: 'input';
      v: number;
      index: number;
      text: string;
      clear: boolean;
    }
  | {
      type: 'point';
      v: number;
      index: number;
      expect?: string | null;
    }
  | {
      type: 'act_facts';
      v: number;
      index: number | null;
      /**
       * @minItems 2
       * @maxItems 2
       */
      point: [unknown, unknown] | null;
    }
  | {
      type: 'scroll';
      v: number;
      down: boolean;
      pages: number;
      index: number | null;
    }
  | {
      type: 'find_text';
      v: number;
      text: string;
    }
  | {
      type: 'dropdown_options';
      v: number;
      index: number;
    }
  | {
      type: 'select_option';
      v: number;
      index: number;
      text: string;
      then?: RealClickMade | null;
    }
  | {
      type: 'search_page';
      v: number;
      pattern: string;
      regex: boolean;
      max_matches: number;
      context: number;
    }
  | {
      type: 'elements_added';
      v: number;
    }
  | {
      type: 'network';
      v: number;
    }
  | {
      type: 'late_click_effect';
      v: number;
      index: number;
      again?: boolean;
    }
  | {
      type: 'history_go';
      v: number;
      delta: number;
    }
  | {
      type: 'markdown';
      v: number;
    };
/**
 * The real (debugger) click the worker made on a dropdown, as the content script asked.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "RealClickMade".
 */
export type RealClickMade = 'opened' | 'chose';

/**
 * Generated from the Rust types by tests/js_types.rs; do not edit.
 */
export interface FromCore {
  PanelReply?: PanelReply;
  AgentEvent?: AgentEvent;
  TaskState?: TaskState;
  ContentRequest?: ContentRequest;
}
/**
 * Where a page finds a core message in its own language.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "LocaleText".
 */
export interface LocaleText {
  /**
   * The message's name in `_locales`, without the `core_` every core message has there.
   */
  key: string;
  /**
   * The values of its placeholders, `$1` first.
   */
  args?: string[];
  /**
   * Another message, shown in its place after `args`: the message's last placeholder.
   */
  cause?: LocaleText | null;
  /**
   * Words that were not written for the person (what the model was told), kept as they
   * are: the pages show them under the message, folded, for whoever wants to know more.
   */
  detail?: string | null;
  /**
   * What the person can do about it from where they read it (a button beside the message).
   */
  remedy?: Remedy | null;
}
/**
 * The reasoning part of an answer, kept in history and shown in the side panel.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ModelThoughts".
 */
export interface ModelThoughts {
  /**
   * Free reasoning, when the settings ask for it.
   */
  thinking?: string | null;
  evaluation_previous_goal: string;
  memory: string;
  next_goal: string;
  /**
   * The plan as the model gave it in this step: a checklist of the task's parts, each ticked
   * off when done. `None` when the model left its plan as it was (or keeps none); an empty
   * list drops it.
   */
  plan?: PlanItem[] | null;
}
/**
 * One part of the model's plan.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "PlanItem".
 */
export interface PlanItem {
  /**
   * The part, in a few words.
   */
  text: string;
  /**
   * Whether it is done.
   */
  done: boolean;
}
/**
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "PlannedAction".
 */
export interface PlannedAction {
  name: string;
  description: string;
  /**
   * Where the pages find `description` in their languages (`core_do_…`).
   */
  description_locale_text?: LocaleText | null;
  params: unknown;
}
/**
 * An act waiting for the person's yes.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "Consent".
 */
export interface Consent {
  /**
   * Unique within the task.
   */
  id: number;
  kind: ConsentKind;
  /**
   * The site it concerns: the new site, the site acted on, the site the text goes to.
   */
  site: string;
  /**
   * The exact act, in English: "Open booking.com", "click \"Place order\" on shop.example".
   */
  act: string;
  act_locale_text: LocaleText;
  /**
   * Why it is held, in English.
   */
  reason: string;
  reason_locale_text: LocaleText;
  /**
   * The answers the person may give.
   */
  choices: ConsentAnswer[];
}
/**
 * Steps the model condensed, shown in place of those steps.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "HistorySummary".
 */
export interface HistorySummary {
  /**
   * The last step the summary covers.
   */
  through_step: number;
  text: string;
}
/**
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "StepRecord".
 */
export interface StepRecord {
  step: number;
  /**
   * The tab the step worked in (0 when the page could not be observed).
   */
  tab_id: number;
  /**
   * The page the step started on.
   */
  url: string;
  title: string;
  /**
   * The model's reasoning, when its answer was valid.
   */
  output: ModelThoughts | null;
  actions: ActionRecord[];
  /**
   * Why the step failed before acting: an invalid answer, an LLM or page error.
   */
  error: string | null;
  /**
   * Where the pages find `error` in their languages (see `crate::message`), when a person
   * is its reader rather than the model.
   */
  error_locale_text?: LocaleText | null;
  usage: Usage;
  /**
   * What the step's LLM call cost in USD, by the price table; `None` for a model it lacks.
   */
  cost_usd?: number | null;
  timings: StepTimings;
  /**
   * The screenshot taken in this step (every step with vision on; after the `screenshot`
   * action with vision auto), as the model saw it.
   */
  screenshot?: Screenshot | null;
  /**
   * Kept short once the step fell far behind (see [`StepRecord::trim`]): the full record
   * is in the task history, and a short one never replaces it there.
   */
  trimmed?: boolean;
  /**
   * What the person was asked in this step, and what they answered (`crate::guard`).
   */
  decisions?: Decision[];
}
/**
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ActionRecord".
 */
export interface ActionRecord {
  name: string;
  /**
   * For people: "click [12] Submit", secrets masked.
   */
  description: string;
  /**
   * Where the pages find `description` in their languages (`core_do_…`).
   */
  description_locale_text?: LocaleText | null;
  params: unknown;
  result: ActionResult;
  /**
   * For an action on an element: the element's stable features as the page showed it, so a
   * replay or a skill can find it again when the numbers have changed.
   */
  target?: ElementFingerprint | null;
}
/**
 * What an action did, in words for the LLM and the user.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ActionResult".
 */
export interface ActionResult {
  /**
   * What happened ("Clicked [3] <button>; the page navigated to …") or what went wrong.
   */
  message: string;
  is_error: boolean;
  /**
   * Set by `done`: the task's final answer.
   */
  done: DoneOutcome | null;
  /**
   * Set when the tab's URL changed because of the action.
   */
  navigated_to: string | null;
  /**
   * Page-derived content the action read (extracted text, matches, options). It is shown to
   * the LLM once, in the next step's results and fenced as page content, not in the
   * history of every later step.
   */
  detail?: string | null;
}
/**
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "DoneOutcome".
 */
export interface DoneOutcome {
  text: string;
  success: boolean;
  /**
   * The task's result in the shape the task asked for, when it gave an output schema.
   */
  data?: {
    [k: string]: unknown | undefined;
  };
}
/**
 * What identifies an element across visits (see the module documentation).
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ElementFingerprint".
 */
export interface ElementFingerprint {
  tag: string;
  /**
   * Its own visible text, whitespace folded, cut.
   */
  text: string;
  /**
   * The stable attributes it had.
   */
  attributes: {
    [k: string]: string | undefined;
  };
  /**
   * The listed elements it sat in, nearest first, as `tag` or `tag "text"`.
   */
  ancestors: string[];
  /**
   * Its rank among the page's elements of the same tag, from 0.
   */
  rank: number;
}
/**
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "Usage".
 */
export interface Usage {
  /**
   * Every input token of the request, those read from the provider's cache included.
   */
  input_tokens: number;
  output_tokens: number;
  /**
   * Of `input_tokens`, those the provider read from its prompt cache, which cost less
   * ([`pricing`]): OpenAI's `prompt_tokens_details.cached_tokens`, Anthropic's
   * `cache_read_input_tokens`, Gemini's `cachedContentTokenCount`.
   */
  cached_input_tokens?: number;
}
/**
 * Milliseconds spent in each phase of a step.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "StepTimings".
 */
export interface StepTimings {
  observe_ms: number;
  llm_ms: number;
  act_ms: number;
}
/**
 * A screenshot of the visible part of the tab.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "Screenshot".
 */
export interface Screenshot {
  /**
   * PNG, base64-encoded.
   */
  png_base64: string;
  width: number;
  height: number;
}
/**
 * A consent and its answer, as the step's record keeps it.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "Decision".
 */
export interface Decision {
  consent: Consent;
  answer: ConsentAnswer;
}
/**
 * Where a task stands, folded from its events: what the task history keeps for each task, said
 * by the core that knows it rather than worked out again from the events by each reader. Sent
 * with every event and with `get_status`.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "TaskState".
 */
export interface TaskState {
  task: string;
  model: string;
  max_steps: number | null;
  conversation_id: string;
  replay: boolean;
  /**
   * A schedule started it (`crate::schedule`).
   */
  scheduled: boolean;
  running: boolean;
  paused: boolean;
  /**
   * Set when a restarted worker continued the task.
   */
  restored: Restored | null;
  /**
   * The latest summary of old steps, when the task had one.
   */
  summary: HistorySummary | null;
  /**
   * The model's plan as it stands, when it keeps one.
   */
  plan?: PlanItem[] | null;
  end: TaskEnd | null;
  usage: Usage;
  /**
   * USD, summed over the priced steps; `None` until one is priced.
   */
  cost_usd: number | null;
  /**
   * Steps that used tokens the price table has no price for.
   */
  unpriced_steps: number;
  step_count: number;
  /**
   * The act waiting for the person's yes, if one is.
   */
  pending_consent: Consent | null;
}
/**
 * How a restarted worker continued a task (`AgentEvent::TaskRestored`).
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "Restored".
 */
export interface Restored {
  step: number;
  steps_kept: number;
  reason: string;
}
/**
 * One task as the list of tasks shows it.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "TaskSummary".
 */
export interface TaskSummary {
  task_id: string;
  /**
   * The task's text, cut to `SUMMARY_TASK_CHARS`.
   */
  task: string;
  status: TaskStatus;
  /**
   * Steps finished.
   */
  step: number;
  cost_usd: number | null;
  /**
   * The tabs it works in (the current one first); none while queued.
   */
  tabs: number[];
  /**
   * Its place in the queue (0 first) while queued.
   */
  queued_at?: number | null;
  /**
   * Whether a schedule started it.
   */
  scheduled: boolean;
}
/**
 * A coding agent connected now that waits for the person's answer (the panel asks).
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ClientAsking".
 */
export interface ClientAsking {
  name: string;
  title: string | null;
}
/**
 * The price of the models whose names start with `model_prefix`, in USD per million tokens.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ModelPrice".
 */
export interface ModelPrice {
  model_prefix: string;
  input_per_million: number;
  output_per_million: number;
  /**
   * Input read from the provider's prompt cache; none = the built-in figure for the model,
   * or else the input price.
   */
  cached_input_per_million?: number | null;
}
/**
 * A typed text with a name suggested for it.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "Suggested".
 */
export interface Suggested {
  name: string;
  example: string;
  /**
   * The step (from 1) that first typed it.
   */
  step: number;
}
/**
 * A coding agent the person answered, as the options list it.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ClientEntry".
 */
export interface ClientEntry {
  /**
   * The name the client gives itself (MCP's `clientInfo.name`).
   */
  name: string;
  /**
   * The name a person reads, when the client gives one.
   */
  title: string | null;
  allowed: boolean;
  /**
   * When the person answered (ms since the epoch).
   */
  answered_ms: number;
}
/**
 * A scheduled task, as the options page lists it and `chrome.storage.local` keeps it.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "Schedule".
 */
export interface Schedule {
  /**
   * Given by [`ScheduleBook::add`]; names the schedule's alarm.
   */
  id: string;
  /**
   * What the person sees in the list, the history and notifications.
   */
  title: string;
  what: ScheduledWork;
  when: Repeat;
  /**
   * A paused schedule does not run and has no next run.
   */
  paused: boolean;
  /**
   * Whether a successful run is told by a notification (a failure always is).
   */
  notify_success: boolean;
  /**
   * When it was made (ms since the epoch); "every N minutes" counts from here.
   */
  created_ms: number;
  /**
   * When its last run began.
   */
  last_run_ms?: number | null;
  /**
   * How its last run ended.
   */
  last_result?: RunResult | null;
  /**
   * When it runs next; none while paused. Missing in a stored entry, it is worked out from
   * the last run (or the creation).
   */
  next_run_ms?: number | null;
  /**
   * The task of its run under way (queued, running or waiting for the person), from the
   * run's start until its result is recorded.
   */
  run_task_id?: string | null;
}
/**
 * How a run ended.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "RunResult".
 */
export interface RunResult {
  /**
   * When it ended.
   */
  at_ms: number;
  ok: boolean;
  /**
   * A line for the list and the notification: the task's answer, or why it failed.
   */
  summary: string;
  /**
   * Where the pages find `summary` in their language; none for words shown as they are
   * (the task's own answer).
   */
  summary_locale_text?: LocaleText | null;
  /**
   * The run's task, in the history (none when no task started).
   */
  task_id: string;
}
/**
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ScreenRegion".
 */
export interface ScreenRegion {
  top: number;
  left: number;
  bottom: number;
  right: number;
}
/**
 * How a frame reads itself after a click, for the snapshot request that follows: as that
 * request will ask.
 *
 * This interface was referenced by `FromCore`'s JSON-Schema
 * via the `definition` "ReadAfter".
 */
export interface ReadAfter {
  viewport_expansion: number;
}
