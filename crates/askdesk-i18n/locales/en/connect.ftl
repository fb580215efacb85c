# What askdesk says about connecting the agents' clients, for the desktop's Connect view and the
# command line's `askdesk hook install` and `doctor` alike: a client's state, what a change did and
# what the person still does, and why a settings file was left unchanged. The clients' names
# (Claude Code, Codex, Gemini CLI) and the settings' keys are their own.

## A client's state (the Connect view's card)

connect-hook-absent = askdesk's hook is not installed
connect-hook-current = askdesk's hook is installed
connect-hook-outdated = askdesk's hook runs another command: { $command }
connect-mcp-absent = askdesk is not one of its MCP servers
connect-mcp-current = askdesk is one of its MCP servers
connect-mcp-outdated = askdesk's MCP entry runs another command: { $command }
# An MCP entry of askdesk's that names no command.
connect-no-command = (no command)
connect-askdesk-missing = askdesk is not installed beside this app

## What a change did, and what the person still does for it to take effect

connect-done-connected = Connected { $client }: { $file } written.
connect-done-disconnected = Disconnected { $client }: { $file } written.
connect-already-connected = { $client } was already connected; nothing changed.
connect-already-disconnected = { $client } was already disconnected; nothing changed.
connect-next-claude-code = Restart Claude Code (or start a new session) so it reads the hook.
connect-next-codex-trust = Codex runs a new hook only once you trust it: open /hooks in Codex and trust askdesk's PermissionRequest hook.
connect-next-codex-restart = Restart Codex so its background server reads the hook.
connect-next-gemini = Restart Gemini CLI; /mcp lists askdesk's tools.

## Why nothing was connected or written

connect-changed-since = { $file } changed since the change was shown; nothing was written: look at the change again
connect-no-home = HOME is not set; name the file with --config
connect-no-config-home = neither XDG_CONFIG_HOME nor HOME is set
connect-no-exe = cannot tell where askdesk is installed: { $error }
connect-no-program = there is no askdesk program beside { $path }; install askdesk (the package installs both)
connect-not-json = { $path } is not valid JSON ({ $error }); it was left unchanged
connect-not-json-object = { $path } is not a JSON object; it was left unchanged
connect-not-toml = { $path } is not valid TOML ({ $error })
# A key of the settings file, quoted ("hooks"), that holds something other than askdesk expects.
connect-key-not-object = { $key } in { $path } is not an object; it was left unchanged
connect-key-not-array = { $key } in { $path } is not an array; it was left unchanged
connect-link-nowhere = { $path } is a symbolic link to { $target }, which does not exist; nothing was written
connect-link-unfollowable = { $path } is a symbolic link to { $target }, which cannot be followed ({ $error }); nothing was written
# A settings file that is a link, and the file it leads to.
connect-link-shown = { $path } (a link to { $target })
connect-read-only = { $path } is read-only; it was left unchanged (make it writable, or use --print and edit it yourself)
connect-not-writable = { $path } is not writable by this user; it was left unchanged (make it writable, or use --print and edit it yourself)
connect-cannot-absolute = cannot make { $path } absolute: { $error }
connect-cannot-read = cannot read { $path }: { $error }
connect-cannot-create = cannot create { $path }: { $error }
connect-cannot-create-folder-of = cannot create the folder of { $path }: { $error }
connect-cannot-back-up = cannot back up { $path } to { $backup }: { $error }
connect-cannot-write = cannot write { $path }: { $error }
connect-cannot-replace = cannot replace { $path }: { $error }
connect-cannot-remove = cannot remove { $path }: { $error }
