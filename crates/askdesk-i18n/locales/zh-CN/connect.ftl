# askdesk 关于连接代理客户端所说的话（连接视图，以及 `askdesk hook install` 和 `doctor`）。
# 客户端的名称（Claude Code、Codex、Gemini CLI）和设置的键名保持原样。

## 客户端的状态

connect-hook-absent = 未安装 askdesk 的钩子
connect-hook-current = 已安装 askdesk 的钩子
connect-hook-outdated = askdesk 的钩子运行的是另一条命令：{ $command }
connect-mcp-absent = askdesk 不是它的 MCP 服务器之一
connect-mcp-current = askdesk 是它的 MCP 服务器之一
connect-mcp-outdated = askdesk 的 MCP 条目运行的是另一条命令：{ $command }
connect-no-command = （没有命令）
connect-askdesk-missing = 这个应用旁边没有安装 askdesk

## 更改做了什么，以及你还需要做什么才能生效

connect-done-connected = 已连接 { $client }：已写入 { $file }。
connect-done-disconnected = 已断开 { $client }：已写入 { $file }。
connect-already-connected = { $client } 本来就已连接；没有任何更改。
connect-already-disconnected = { $client } 本来就已断开；没有任何更改。
connect-next-claude-code = 重启 Claude Code（或开始新会话），让它读取钩子。
connect-next-codex-trust = Codex 只有在你信任新钩子后才会运行它：在 Codex 中打开 /hooks，并信任 askdesk 的 PermissionRequest 钩子。
connect-next-codex-restart = 重启 Codex，让它的后台服务读取钩子。
connect-next-gemini = 重启 Gemini CLI；/mcp 会列出 askdesk 的工具。

## 为什么没有连接或写入

connect-changed-since = 自显示更改以来 { $file } 已变化；没有写入任何内容：请重新查看更改
connect-no-home = 未设置 HOME；请用 --config 指定文件
connect-no-config-home = XDG_CONFIG_HOME 和 HOME 都未设置
connect-no-exe = 无法确定 askdesk 的安装位置：{ $error }
connect-no-program = { $path } 旁边没有 askdesk 程序；请安装 askdesk（安装包会同时安装两者）
connect-not-json = { $path } 不是有效的 JSON（{ $error }）；文件未改动
connect-not-json-object = { $path } 不是 JSON 对象；文件未改动
connect-not-toml = { $path } 不是有效的 TOML（{ $error }）
connect-key-not-object = { $path } 中的 { $key } 不是对象；文件未改动
connect-key-not-array = { $path } 中的 { $key } 不是数组；文件未改动
connect-link-nowhere = { $path } 是指向 { $target } 的符号链接，而目标不存在；没有写入任何内容
connect-link-unfollowable = { $path } 是指向 { $target } 的符号链接，无法跟随（{ $error }）；没有写入任何内容
connect-link-shown = { $path }（指向 { $target } 的链接）
connect-read-only = { $path } 是只读的；文件未改动（请让它可写，或使用 --print 自行编辑）
connect-not-writable = 当前用户无法写入 { $path }；文件未改动（请让它可写，或使用 --print 自行编辑）
connect-cannot-absolute = 无法把 { $path } 变成绝对路径：{ $error }
connect-cannot-read = 无法读取 { $path }：{ $error }
connect-cannot-create = 无法创建 { $path }：{ $error }
connect-cannot-create-folder-of = 无法创建 { $path } 所在的文件夹：{ $error }
connect-cannot-back-up = 无法把 { $path } 备份到 { $backup }：{ $error }
connect-cannot-write = 无法写入 { $path }：{ $error }
connect-cannot-replace = 无法替换 { $path }：{ $error }
connect-cannot-remove = 无法删除 { $path }：{ $error }
