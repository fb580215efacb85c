//! Build script: tauri-build embeds the config and generates `allow-<command>` permissions for the
//! app's own commands, so the capability file can grant exactly those and nothing else.
const COMMANDS: &[&str] = &[
    "get_queue",
    "get_settings",
    "set_choices",
    "submit",
    "attach_image",
    "kept_picture",
    "dismiss",
    "close_ended",
    "set_dnd",
    "save_draft",
    "set_past_comment",
    "get_history",
    "open_link",
    "hide_window",
    "shown",
    "viewed",
    "draft_rule",
    "draft_rule_from_history",
    "save_rule",
    "get_rules",
    "set_rule_mode",
    "open_rules_file",
    "hold_deadline",
    "get_notes",
    "close_note",
    "get_connect",
    "preview_connect",
    "apply_connect",
    "set_autostart",
    "get_catalogue",
    "set_language",
    "get_phone",
    "set_phone",
    "revoke_device",
    "allow_passkey",
    "add_phone",
    "confirm_phone",
    "cancel_phone",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed");
}
