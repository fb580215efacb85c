# askdesk 命令行给人看的输出（表格与句子；不含 --json，也不含协议的错误消息，后者保持协议原文）。

## askdesk history

history-none-match = 历史中没有匹配的请求（共记录 { $recorded } 条）
history-empty = 还没有历史
history-col-when = 时间 (UTC)
history-col-agent = 代理
history-col-outcome = 结果
history-col-question = 问题
history-col-answer = 回答
history-col-by = 回答者
history-more = { " " }（还有更多）
history-skipped = （已跳过）

## askdesk status

status-server = { $name } { $version }，位于 { $socket }
status-connections = 连接：{ $count }
status-history = 历史：{ $state }
status-history-on = 开启
status-history-off = 关闭（--no-history）
status-history-failing = 出错：回答照常送达，但没有记录
status-history-unavailable = 不可用：不记录任何内容
status-agents = 代理：{ $count }
status-owned = { " " } （从属）
status-answerers = 回答者（按链的顺序）：{ $count }
status-prepended = { " " } 排在最前
status-pending = 等待中的请求：{ $count }
status-no-agent = 无代理
status-request = { $agent }  { $questions } 个问题  已等待 { $age }
status-held-by = { " " } 由 { $holder } 持有
age-seconds = { $seconds } 秒
age-minutes = { $minutes } 分 { $seconds } 秒
age-hours = { $hours } 小时 { $minutes } 分

## askdesk devices

devices-none = 没有已配对的设备
devices-never = 从未
devices-suspended = 已暂停
devices-ok = 正常
devices-col-name = 名称
devices-col-paired = 配对时间 (UTC)
devices-col-seen = 最近在线 (UTC)
devices-col-scope = 范围
devices-col-passkey = 通行密钥
devices-col-push = 推送
devices-passkey-may = 可注册
devices-passkey-yes = 有
devices-passkey-no = 无
devices-push-on = 开
devices-push-off = 关
devices-push-dropped = 已被丢弃 { $when }（{ $status }）
devices-col-state = 状态
devices-scope-up-to = 最高到 { $class }
devices-scope-agents = ；代理 { $agents }
devices-scope-projects = ；位于 { $projects }
devices-revoked = 已撤销 { $name }
devices-scoped = 已设定范围 { $name }
devices-confirmed = 已确认 { $name }

## askdesk remote

remote-serving = 正在为手机提供服务：{ $origin }
remote-pairing-failed = 配对失败：{ $reason }
remote-open-on-phone = 请在 { $seconds } 秒内在手机上打开：{ $url }
remote-asks-to-pair = “{ $name }”请求配对：请输入它显示的代码
remote-paired = 已配对“{ $name }”

## askdesk hook install / uninstall

hook-fell-back = askdesk hook：{ $reason }；改由 { $client } 显示它自己的提示
hook-merge-into = 请把以下内容合并到 { $path }：
hook-installed-already = { $client } 的 askdesk 钩子已安装在 { $path } 中，没有任何改动。
hook-installed = 已在 { $path } 中为 { $client } 安装 askdesk 钩子（PermissionRequest，匹配 { $matcher }，超时 { $timeout } 秒）。
hook-backup = 原文件保留为 { $path }。
hook-not-installed = { $path } 中没有安装 { $client } 的 askdesk 钩子，没有任何改动。
hook-without = 去掉 askdesk 钩子后的 { $path }：
hook-removed = 已从 { $path } 中移除 { $client } 的 askdesk 钩子。

## askdesk rules list / test

rules-none = { $path } 中没有规则
rules-col-rule = 规则
rules-col-mode = 模式
rules-col-after = 延时
rules-col-action = 动作
rules-col-hits = 命中
rules-col-acted = 执行
rules-col-agreed = 一致
rules-col-differed = 不同
rules-warning = 警告：{ $warning }
rules-span-all = 整个日志
rules-span-since = 最近 { $since }
rules-replayed = 来自{ $span }的 { $requests } 个请求，已按 { $path } 重放
rules-rule = 规则 { $name }（{ $mode }，第 { $line } 行）：{ $action }
rules-applies = { " " } 适用于 { $hits } 个请求；自行处理 { $acted } 个；与你一致 { $agreed } 个，不同 { $differed } 个
rules-differs-rule = { "    " }规则：{ $verdict }
rules-differs-you = { "    " }你：  { $settled }
rules-verdict-answer = 回答 { $answer }
rules-verdict-ask = 询问你
rules-settled-answered = 已回答 { $answer }
rules-settled-dismissed = 已驳回
rules-settled-failed = 失败（{ $code }）
rules-settled-withdrawn = 已撤回
rules-unmatched = 没有规则适用的请求：{ $unmatched } 个

## askdesk doctor

doctor-ok = 正常
doctor-warning = 警告
doctor-problem = 问题
doctor-finding = { $topic }：{ $what }
doctor-fix = 修复：{ $fix }
doctor-summary = { $problems } 个问题，{ $warnings } 个警告
doctor-topic-broker = 中转服务
doctor-topic-session-bus = 会话总线
doctor-topic-notifications = 通知
doctor-topic-tray = 托盘
doctor-topic-rules = 规则
doctor-topic-history = 历史
doctor-start = 启动桌面应用（askdesk-desktop，或从启动器打开），或运行 `askdesk serve`
doctor-broker-desktop = 桌面应用
doctor-broker-serve = `askdesk serve`（没有桌面回答者：不会显示任何对话框）
doctor-broker-answers = { $which } 在 { $socket } 应答（askdesk { $version }）
doctor-broker-none = { $socket } 上没有运行中的 askdesk 中转服务
doctor-broker-failed = { $socket } 上的中转服务出错：{ $error }
doctor-broker-failed-fix = 停止占用该套接字的程序，然后{ $start }
doctor-broker-silent = { $socket } 上的中转服务在 { $seconds } 秒内没有应答（已停止或卡住）
doctor-broker-silent-fix = 让它继续运行（`kill -CONT`）或结束它，然后重新启动
doctor-bus-unset = 没有设置 DBUS_SESSION_BUS_ADDRESS：桌面应用无法发出通知，也无法显示托盘图标
doctor-bus-unset-fix = 在你的桌面会话中运行 askdesk（会话里的终端带有这个变量），或用 `dbus-run-session -- askdesk-desktop` 启动一个会话
doctor-notifications-ok = 会话总线上有通知服务在运行
doctor-notifications-missing = 会话总线上没有通知服务：提问会打开窗口，但不会发出通知
doctor-notifications-fix = 启动桌面的通知守护进程（或 `dunst`）
doctor-tray-ok = 会话总线上有托盘宿主（StatusNotifierWatcher）在运行
doctor-tray-missing = 会话总线上没有托盘宿主（StatusNotifierWatcher）：应用的托盘图标和等待数不会显示
doctor-tray-fix = 在 GNOME 上启用 AppIndicator 扩展（gnome-shell-extension-appindicator）；其他桌面自带托盘
doctor-bus-unasked = 无法向会话总线查询 { $name }：{ $reason }
doctor-bus-unasked-fix = 安装 dbus-send（dbus-bin 软件包），以便 doctor 检查
doctor-no-dbus-send = 无法运行 dbus-send：{ $error }
doctor-set-home = 设置 HOME
doctor-client-absent = 本机未安装（没有 { $dir }）
doctor-hook-install = 运行 `askdesk hook install { $client }`，或在桌面应用中点“连接”
doctor-fix-file-then = 修好该文件，然后{ $install }
doctor-fix-named-file = 修好消息中指出的文件
doctor-mcp-ok = askdesk 已作为 MCP 服务器：{ $command } mcp
doctor-mcp-broken = askdesk 的 MCP 条目运行 { $command }，但它{ $why }
doctor-mcp-broken-fix = 用现在安装的 askdesk 重新添加（见 docs/mcp.md），或在桌面应用中点“连接”
doctor-connect-by-hand = 在桌面应用中点“连接”，或手动添加 MCP 条目（docs/mcp.md）
doctor-not-connected = 已安装（{ $dir }），但没有连接到 askdesk
doctor-hook-broken = 钩子运行 { $program }，但它{ $why }
doctor-hook-ok = 钩子已安装，在 { $socket } 提问
doctor-hook-elsewhere = 钩子在 { $asks } 提问，但本机的中转服务在 { $here }
doctor-hook-restart-codex = { $install }，然后重启 Codex：它的后台服务保留第一个启动的 codex 的环境
doctor-hook-codex-unnamed = 钩子没有指明套接字：它会在第一个启动的 codex 的环境所指之处提问
doctor-hook-codex-unnamed-fix = { $install }（它会把套接字写进命令）
doctor-hook-env-given = Claude Code 提供给它的环境，而不是 --socket
doctor-hook-env = Claude Code 的环境（ASKDESK_SOCKET，否则 XDG_RUNTIME_DIR）
doctor-hook-env-ok = 钩子已安装，在 { $how } 的套接字提问：本机为 { $here }
doctor-program-missing = 不存在（或不可执行）
doctor-program-off-path = 不在 PATH 中
doctor-rules-set-home = 设置 XDG_CONFIG_HOME 或 HOME
doctor-rules-none = 没有规则文件（{ $path }）：没有任何问题由规则回答
doctor-rules-broken-fix = 修好它指出的那一行（docs/rules.md）；在此期间，运行中的中转服务沿用上次成功加载的规则
doctor-rules-count = { $path } 中有 { $count } 条规则
doctor-rules-warning-fix = 添加一个 `match`，写明它适用的代理、工具或项目
doctor-history-set-home = 设置 XDG_DATA_HOME 或 HOME
doctor-history-failing = 中转服务无法记录回答：{ $reason }
doctor-history-no-reason = 未说明原因
doctor-history-failing-fix = 释放磁盘空间，或修好日志所在的文件夹（在此期间回答照常送达）
doctor-history-off = 中转服务以 --no-history 运行：回答不会被记录
doctor-history-off-fix = 不带 --no-history 启动它
doctor-history-none = 还没有；它将保存在 { $path }
doctor-history-unreadable = 无法读取 { $path }：{ $error }
doctor-history-unreadable-fix = 修正该文件夹的权限
doctor-history-not-folder = { $path } 不是文件夹：什么也无法记录
doctor-history-move = 把 { $path } 移走
doctor-history-mode = { $path } 的权限是 { $mode }
doctor-history-not-writable = 你无法写入 { $path }
doctor-history-foreign = 你无法写入 { $path }（它属于另一个用户）
doctor-history-chown = 把它交还给你：chown -R $USER { $dir }; chmod 700 { $dir }
doctor-history-loose = 不私密：{ $loose }；别人能读到你的回答
doctor-history-chmod = chmod 700 { $dir } && chmod 600 { $dir }/*（中转服务打开日志时会收紧它们）
doctor-history-ok = { $path }（{ $kib } KiB，私密，可写）
