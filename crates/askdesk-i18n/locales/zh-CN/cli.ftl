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
rules-verdict-deny = 拒绝（{ $message }）
rules-verdict-dismiss = 驳回（{ $message }）
rules-verdict-ask = 询问你
rules-settled-answered = 已回答 { $answer }
rules-settled-dismissed = 已驳回
rules-settled-failed = 失败（{ $code }）
rules-settled-withdrawn = 已撤回
rules-unmatched = 没有规则适用的请求：{ $unmatched } 个
