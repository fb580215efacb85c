# The desktop app's own words outside the page: its notifications and its tray icon.

## Notifications

# The agent's name comes isolated, as the agent wrote it.
notify-asks = { $agent } asks
notify-more = ({ $more ->
        [one] +{ $more } more question
       *[other] +{ $more } more questions
    })
notify-rule-will = Rule “{ $rule }” will { $action } in { $left } unless you answer.
notify-open = Open
notify-hold = Hold
notify-waiting = { $count ->
        [one] { $count } question waiting
       *[other] { $count } questions waiting
    }
notify-and-more = and { $more } more
notify-gone-title = That question is no longer waiting
notify-gone-body = It was settled before your click; nothing was sent.
# A time left: "45 s", "10 min", "2 h", "2 h 5 min".
notify-seconds = { $seconds } s
notify-minutes = { $minutes } min
notify-hours = { $hours } h
notify-hours-minutes = { $hours } h { $minutes } min

## The tray icon

tray-open = Open askdesk
tray-dnd = Do not disturb
tray-quit = Quit askdesk
tray-waiting = { $waiting ->
        [0] askdesk — no questions waiting
        [one] askdesk — { $waiting } question waiting
       *[other] askdesk — { $waiting } questions waiting
    }
