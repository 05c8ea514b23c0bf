// Generated from to-core.schema.json by scripts/lib/js-types.mjs: do not edit.

/**
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "PanelRequest".
 */
export type PanelRequest =
  | {
      type: 'start_task';
      v: number;
      task: string;
      tab_id?: number | null;
      start_url?: string | null;
      output_schema?: {
        [k: string]: unknown | undefined;
      };
      /**
       * Continue the conversation: the task is told the earlier tasks since the last new one.
       */
      follow_up?: boolean;
      /**
       * The task a follow-up continues the conversation of (while it runs, the follow-up
       * waits in the queue for its end); when absent, the latest task that ended, else the
       * latest.
       */
      follows?: string | null;
      /**
       * Start in a new tab (in the task's own tab group) instead of the user's tab.
       */
      new_tab?: boolean;
      /**
       * The files the person attached (their bytes are kept by the panel: files-store.js).
       */
      files?: TaskFile[];
      /**
       * The model for this task, chosen in the side panel; the saved model when absent.
       */
      model?: string | null;
    }
  | {
      type: 'answer_question';
      v: number;
      answer: string;
      task_id?: string | null;
    }
  | {
      type: 'answer_consent';
      v: number;
      id: number;
      answer: ConsentAnswer;
      task_id?: string | null;
    }
  | {
      type: 'stop_task';
      v: number;
      task_id?: string | null;
    }
  | {
      type: 'pause_task';
      v: number;
      task_id?: string | null;
    }
  | {
      type: 'resume_task';
      v: number;
      task_id?: string | null;
    }
  | {
      type: 'get_status';
      v: number;
      task_id?: string | null;
      since?: number | null;
    }
  | {
      type: 'test_connection';
      v: number;
      settings: unknown;
    }
  | {
      type: 'list_models';
      v: number;
      settings?: {
        [k: string]: unknown | undefined;
      };
    }
  | {
      type: 'replay_task';
      v: number;
      title: string;
      start_url: string;
      steps: ReplayStep[];
    }
  | {
      type: 'read_settings_lists';
      v: number;
      extra_headers: string;
      prices: string;
    }
  | {
      type: 'check_settings';
      v: number;
      settings: unknown;
    }
  | {
      type: 'draft_skill';
      v: number;
      start_url: string;
      steps: ReplayStep[];
    }
  | {
      type: 'save_skill';
      v: number;
      draft: SkillDraft;
    }
  | {
      type: 'save_secret';
      v: number;
      name: string;
      value: string;
      site: string;
    }
  | {
      type: 'list_schedules';
      v: number;
    }
  | {
      type: 'save_schedule';
      v: number;
      id?: string | null;
      draft: ScheduleDraft;
    }
  | {
      type: 'remove_schedule';
      v: number;
      id: string;
    }
  | {
      type: 'pause_schedule';
      v: number;
      id: string;
      paused: boolean;
    }
  | {
      type: 'run_schedule_now';
      v: number;
      id: string;
    }
  | {
      type: 'list_clients';
      v: number;
    }
  | {
      type: 'answer_client';
      v: number;
      name: string;
      allow: boolean;
    }
  | {
      type: 'forget_client';
      v: number;
      name: string;
    }
  | {
      type: 'set_client_options';
      v: number;
      enabled: boolean;
      stop_on_disconnect: boolean;
    };
/**
 * The person's answer.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "ConsentAnswer".
 */
export type ConsentAnswer = ('allow_once' | 'deny') | 'allow_for_task' | 'always';
/**
 * What a schedule runs.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
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
      params?: {
        [k: string]: unknown | undefined;
      };
    };
/**
 * When a schedule runs. Times of day are the local wall clock's `"HH:MM"` (24-hour).
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
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
 * Generated from the Rust types by tests/js_types.rs; do not edit.
 */
export interface ToCore {
  PanelRequest?: PanelRequest;
  ContentReply?: ContentReply;
  StoredSettings?: StoredSettings;
}
/**
 * A file the person attached to the task, for `upload_file`. The model reads its name, type
 * and size, never its bytes; the browser reads the bytes where the panel kept them, by `id`.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "TaskFile".
 */
export interface TaskFile {
  /**
   * Where the panel kept its bytes (extension/files-store.js).
   */
  id: string;
  name: string;
  /**
   * Its MIME type, as the browser gave it (may be empty).
   */
  type?: string;
  /**
   * In bytes.
   */
  size: number;
}
/**
 * One saved step to replay: what it set out to do, and its actions.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "ReplayStep".
 */
export interface ReplayStep {
  goal: string;
  actions: ReplayAction[];
}
/**
 * One saved action: its name and parameters as recorded, and the element it acted on.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "ReplayAction".
 */
export interface ReplayAction {
  name: string;
  params: unknown;
  target?: ElementFingerprint | null;
}
/**
 * What identifies an element across visits (see the module documentation).
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "ElementFingerprint".
 */
export interface ElementFingerprint {
  tag: string;
  /**
   * Its own visible text, whitespace folded, cut.
   */
  text?: string;
  /**
   * The stable attributes it had.
   */
  attributes?: {
    [k: string]: string | undefined;
  };
  /**
   * The listed elements it sat in, nearest first, as `tag` or `tag "text"`.
   */
  ancestors?: string[];
  /**
   * Its rank among the page's elements of the same tag, from 0.
   */
  rank?: number;
}
/**
 * What the panel sends to save a skill.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "SkillDraft".
 */
export interface SkillDraft {
  name: string;
  description?: string;
  start_url: string;
  steps: ReplayStep[];
  /**
   * The typed texts to make parameters, each under the name the person chose.
   */
  params?: SkillParam[];
}
/**
 * One parameter: its name, and the text typed when the skill was saved (an example for the
 * model and a default for the person).
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "SkillParam".
 */
export interface SkillParam {
  name: string;
  example: string;
}
/**
 * A new schedule, or the new settings of one, as the options page sends them.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "ScheduleDraft".
 */
export interface ScheduleDraft {
  title: string;
  what: ScheduledWork;
  when: Repeat;
  paused?: boolean;
  notify_success?: boolean;
}
/**
 * The content script's answer. `code` says what kind of failure it was, so the worker can map
 * it to a typed error.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "ContentReply".
 */
export interface ContentReply {
  ok: boolean;
  /**
   * A frame's snapshot, as JSON text: one string crosses from the page to the worker at
   * once, where an object of a thousand nodes is converted field by field twice on the way.
   */
  snapshot_json?: string | null;
  code?: string | null;
  message?: string | null;
  /**
   * What the request produced, in the request's own shape.
   */
  result?: {
    [k: string]: unknown | undefined;
  };
}
/**
 * Settings as stored: every field optional, so a partial or old store still parses.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "StoredSettings".
 */
export interface StoredSettings {
  llm?: StoredLlm;
  max_steps?: number | null;
  /**
   * How many tasks may run at once in this browser (the rest wait in the queue).
   */
  max_parallel_tasks?: number | null;
  max_actions_per_step?: number | null;
  max_failures?: number | null;
  /**
   * Seconds one action may take before it is abandoned.
   */
  action_timeout_s?: number | null;
  /**
   * How far beyond the viewport elements are listed, in CSS pixels; -1 = the whole page.
   */
  viewport_expansion?: number | null;
  /**
   * Numbered boxes over the elements while a task runs.
   */
  highlights?: boolean | null;
  /**
   * The engine `search` uses when the LLM names none: duckduckgo (default), google or bing.
   */
  search_engine?: string | null;
  /**
   * Host globs where the LLM may run JavaScript with `evaluate`; empty = nowhere.
   */
  evaluate_domains?: string[];
  /**
   * When not empty, only these actions are offered (`done` always is).
   */
  include_actions?: string[];
  /**
   * Actions never offered.
   */
  exclude_actions?: string[];
  /**
   * Values the LLM may use by name (`<secret>name</secret>`), each for some sites or all.
   */
  secrets?: StoredSecret[];
  /**
   * URL firewall: when not empty, only these host globs may be opened.
   */
  allowed_domains?: string[];
  /**
   * URL firewall: host globs never opened (wins over `allowed_domains`).
   */
  blocked_domains?: string[];
  /**
   * Sites outside a task's own: `ask` (the default), `listed` (only the task's sites and
   * `always_sites`) or `free` (go and act anywhere without asking).
   */
  site_policy?: string | null;
  /**
   * Sites the person always allows (answered "Always"), e.g. `booking.com`.
   */
  always_sites?: string[];
  /**
   * Screenshots for the model: `off`, `on` (every step) or `auto` (after the `screenshot` action).
   */
  vision?: string | null;
  /**
   * Whether the model writes free reasoning before each answer (default on).
   */
  thinking?: boolean | null;
  /**
   * The most input tokens one agent request may carry before old history is compacted.
   */
  request_budget_tokens?: number | null;
  /**
   * The API key is kept in chrome.storage.session (until the browser closes), not with
   * these settings; the extension puts it into `llm.api_key` before they are checked.
   */
  keys_in_session?: boolean;
}
/**
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "StoredLlm".
 */
export interface StoredLlm {
  /**
   * The wire format, one of [`SUPPORTED_PROVIDERS`]. Empty means `openai`.
   */
  provider?: string;
  base_url?: string;
  model?: string;
  api_key?: string;
  /**
   * The model `extract` uses to read pages; empty = the agent's model.
   */
  extraction_model?: string;
  /**
   * Headers sent with every request, `{"name": "value"}` (a gateway's own key, OpenRouter's
   * `HTTP-Referer`, …). A header the provider's format also sets is replaced.
   */
  extra_headers?: {
    [k: string]: string | undefined;
  };
  /**
   * Azure OpenAI's `api-version` (required with the resource's endpoint, e.g. `2024-10-21`; not
   * with the v1 base URL); other providers ignore it.
   */
  api_version?: string;
  /**
   * Tried once when the model fails in a way another model may not (see `LlmClient`); empty = none.
   */
  fallback_model?: string;
  /**
   * Seconds one LLM request may take before it is abandoned (10 to 600, default 60).
   */
  timeout_s?: number | null;
  /**
   * Prices that replace or extend the built-in table, in USD per million tokens.
   */
  prices?: ModelPrice[];
  /**
   * How an OpenAI-compatible server is asked for JSON: `json_schema` or `json_object`;
   * empty = `json_object` for DeepSeek (which has no schema mode), `json_schema` elsewhere.
   */
  structured_output?: string;
  /**
   * Ollama's context window in tokens (`options.num_ctx`), 12,096 (the smallest request
   * budget and room for the answer) to 1,048,576; none = [`DEFAULT_OLLAMA_CONTEXT_TOKENS`].
   * Other providers ignore it.
   */
  context_tokens?: number | null;
}
/**
 * The price of the models whose names start with `model_prefix`, in USD per million tokens.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
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
 * A secret as stored by the options page.
 *
 * This interface was referenced by `ToCore`'s JSON-Schema
 * via the `definition` "StoredSecret".
 */
export interface StoredSecret {
  name?: string;
  value?: string;
  /**
   * Host globs where the secret may be used; empty = every site.
   */
  domains?: string[];
}
