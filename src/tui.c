/* tui.c — the interactive frontend's loop: the terminal, the clock, the session and the actions
 * keys ask for. tui_screen.c keeps the state, tui_draw.c draws it.
 *
 * Threads: this runs on the main thread and reads the profile only through snapshot references.
 * Signals: session_open() blocked SIGINT, SIGTERM, SIGHUP, SIGCHLD and SIGUSR1 in every thread;
 * they arrive on the session's signalfd, so quitting on them restores the terminal in the loop.
 * Browsing a fixed snapshot has no session: tui_browse() blocks SIGINT, SIGTERM and SIGHUP itself
 * and polls a signalfd of its own for them.
 * SIGWINCH is not blocked: ncurses' handler turns it into KEY_RESIZE, and ours (chained before it)
 * also writes to a pipe the loop polls, since the signal may land on another thread while this
 * one sleeps in poll(). Fatal errors restore the terminal through util_set_fatal_hook(). */
#include "proftop/tui.h"

#include "proftop/export.h"
#include "proftop/session.h"
#include "proftop/theme.h"
#include "proftop/tui_screen.h"
#include "proftop/util.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <term.h>
#include <unistd.h>

#define MESSAGE_NS 5000000000ull   /* a message stays this long, or until a key */
#define WINDOW_WAIT_NS 150000000ull /* after `w`: the collector's next publication */

/* The few globals signal handlers and the fatal hook need. */
static SCREEN *active_screen;
static FILE *tty_in;            /* /dev/tty when stdin is not the terminal */
static int winch_pipe[2] = { -1, -1 };
static struct sigaction curses_winch;

struct tui {
	struct tui_screen screen;
	struct session *session;   /* NULL when browsing a fixed snapshot */
	int quit_fd;               /* browsing: a signalfd for SIGINT, SIGTERM, SIGHUP */
	const struct tui_options *o;
	uint64_t start_ns, next_refresh, refresh_ns;
	char **themes;
	size_t nthemes;
	bool no_colors;
};

/* --- the terminal ----------------------------------------------------------------------------- */

static void restore_terminal(void)
{
	if (!active_screen)
		return;
	endwin();
	sigaction(SIGWINCH, &curses_winch, NULL);
	delscreen(active_screen);
	active_screen = NULL;
	if (tty_in)
		fclose(tty_in);
	tty_in = NULL;
	for (int i = 0; i < 2; i++) {
		if (winch_pipe[i] >= 0)
			close(winch_pipe[i]);
		winch_pipe[i] = -1;
	}
	util_set_fatal_hook(NULL);
}

static void on_winch(int sig, siginfo_t *info, void *context)
{
	int saved = errno;

	if (curses_winch.sa_flags & SA_SIGINFO) {
		if (curses_winch.sa_sigaction)
			curses_winch.sa_sigaction(sig, info, context);
	} else if (curses_winch.sa_handler != SIG_DFL && curses_winch.sa_handler != SIG_IGN) {
		curses_winch.sa_handler(sig);
	}
	if (winch_pipe[1] >= 0 && write(winch_pipe[1], "w", 1) < 0) {
		/* the pipe is full: the loop is awake already */
	}
	errno = saved;
}

static void chain_winch(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_winch;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (pipe2(winch_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		winch_pipe[0] = winch_pipe[1] = -1;
	sigaction(SIGWINCH, &sa, &curses_winch);
}

static FILE *key_input(void)
{
	if (isatty(STDIN_FILENO))
		return stdin;
	tty_in = fopen("/dev/tty", "re");
	return tty_in;
}

bool tui_usable(void)
{
	const char *term = getenv("TERM");
	int err = 0, fd;

	if (!isatty(STDOUT_FILENO) || !term || !*term || !strcmp(term, "dumb"))
		return false;
	if (setupterm(NULL, STDOUT_FILENO, &err) != OK)
		return false;
	del_curterm(cur_term);
	if (isatty(STDIN_FILENO))
		return true;
	fd = open("/dev/tty", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int open_terminal(struct tui *t)
{
	FILE *in = key_input();

	setlocale(LC_ALL, "");
	if (!in)
		return -1;
	active_screen = newterm(NULL, stdout, in);
	if (!active_screen) {
		if (tty_in)
			fclose(tty_in);
		tty_in = NULL;
		return -1;
	}
	util_set_fatal_hook(restore_terminal);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	mouseinterval(0);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	if (has_colors()) {
		start_color();
		use_default_colors();
	}
	t->no_colors = !has_colors();
	t->screen.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	chain_winch();
	return 0;
}

/* --- themes ----------------------------------------------------------------------------------- */

/* The theme to start with: the one asked for, else default, or mono when colours are unwanted or
 * impossible. A bad theme is reported (also on stderr, which shows once the screen is gone) and
 * the default used. */
static void first_theme(struct tui *t, struct theme *theme, char **complaint)
{
	const char *no_color = getenv("NO_COLOR");
	char *error = NULL;

	theme_builtin(theme, "default");
	*complaint = NULL;
	if (!t->o->theme) {
		if (no_color && *no_color)
			theme_builtin(theme, "mono");
		return;
	}
	if (theme_load(theme, t->o->theme, &error)) {
		fprintf(stderr, "proftop: theme: %s; using the default theme\n", error);
		*complaint = xasprintf("theme: %s; using the default theme", error);
		free(error);
		theme_builtin(theme, "default");
	}
}

static void apply_theme(struct tui *t, const struct theme *theme)
{
	struct theme mono;

	if (t->no_colors && strcmp(theme->name, "mono")) {
		theme_builtin(&mono, "mono");
		theme = &mono;
	}
	tui_draw_theme(&t->screen, theme);
}

static void next_theme(struct tui *t)
{
	struct theme theme;
	char *error = NULL;
	size_t i = 0;

	if (t->no_colors) {
		tui_screen_message(&t->screen, true, "this terminal has no colours: mono theme only");
		return;
	}
	if (!t->themes)
		t->nthemes = theme_names(&t->themes);
	while (i < t->nthemes && strcmp(t->themes[i], t->screen.theme.name))
		i++;
	i = i < t->nthemes ? (i + 1) % t->nthemes : 0;
	if (theme_load(&theme, t->themes[i], &error)) {
		tui_screen_message(&t->screen, true, "%s", error);
		free(error);
		return;
	}
	apply_theme(t, &theme);
	tui_screen_message(&t->screen, false, "theme %s", theme.name);
}

/* --- actions ---------------------------------------------------------------------------------- */

/* The one place `s` and SIGUSR1 save a snapshot: the export module's writer is called here. */
/* `s` and SIGUSR1: the cumulative profile as it is now (sampling goes on). */
static void save_snapshot(struct tui *t)
{
	char *message;
	int err;

	if (!t->screen.live) {
		tui_screen_message(&t->screen, true, "nothing to save yet");
		return;
	}
	err = export_save(t->screen.live, t->o->export, &message);
	tui_screen_message(&t->screen, err != 0, "%s", message);
	free(message);
}

static void change_freq(struct tui *t, bool up)
{
	static const unsigned steps[] = { 1, 10, 49, 99, 199, 499, 999, 1999, 4999, 9999, 19999,
					  49999, 99999 };
	size_t n = sizeof(steps) / sizeof(*steps), i;
	unsigned freq = t->screen.live ? t->screen.live->freq : 999, next, got;

	if (!t->session || t->screen.ended) {
		tui_screen_message(&t->screen, true, "not sampling: the frequency cannot change");
		return;
	}
	if (up) {
		for (i = 0; i < n && steps[i] <= freq; i++)
			;
		next = i < n ? steps[i] : steps[n - 1];
	} else {
		for (i = n; i > 0 && steps[i - 1] >= freq; i--)
			;
		next = i > 0 ? steps[i - 1] : steps[0];
	}
	got = session_set_freq(t->session, next);
	if (got < next)
		tui_screen_message(&t->screen, true, "sampling at %u Hz per thread: the most this "
				   "run allows (start with a higher -F to go higher)", got);
	else
		tui_screen_message(&t->screen, false, "sampling at %u Hz per thread", got);
	t->next_refresh = util_now_ns() + WINDOW_WAIT_NS;
}

static void refresh_snapshot(struct tui *t)
{
	struct snapshot *s = NULL;

	if (t->screen.window)
		s = session_window_snapshot(t->session);
	if (!s)
		s = session_snapshot(t->session);
	tui_screen_set_snapshot(&t->screen, s);
}

static void toggle_window(struct tui *t)
{
	if (!t->session) {
		t->screen.window = false;
		tui_screen_message(&t->screen, true, "a saved profile has no time window");
		return;
	}
	session_want_window(t->session, t->screen.window);
	if (t->screen.window)
		tui_screen_message(&t->screen, false, "the last %.0f seconds only (w again: since the start)",
				   t->o->window);
	else
		tui_screen_message(&t->screen, false, "every sample since the start");
	if (t->screen.ended)
		refresh_snapshot(t); /* the final window was made just now */
	else
		t->next_refresh = util_now_ns() + WINDOW_WAIT_NS;
}

/* Profiling is over (the command exited, the processes are gone, or the duration passed): stop
 * the session, which publishes the final profile, and keep showing it. */
static void end_profiling(struct tui *t, bool timeout)
{
	bool launched = session_launched(t->session);

	session_stop(t->session);
	t->screen.ended = true;
	if (launched && timeout)
		snprintf(t->screen.state, sizeof(t->screen.state), "stopped after %gs; status %d",
			 t->o->duration, session_exit_code(t->session));
	else if (launched)
		snprintf(t->screen.state, sizeof(t->screen.state), "exited with status %d",
			 session_exit_code(t->session));
	else if (timeout)
		snprintf(t->screen.state, sizeof(t->screen.state), "detached after %gs", t->o->duration);
	else
		snprintf(t->screen.state, sizeof(t->screen.state), "ended");
	refresh_snapshot(t);
}

static bool act(struct tui *t, enum tui_action a)
{
	switch (a) {
	case TUI_ACT_QUIT:
		return false;
	case TUI_ACT_FREQ_UP:
	case TUI_ACT_FREQ_DOWN:
		change_freq(t, a == TUI_ACT_FREQ_UP);
		break;
	case TUI_ACT_SAVE:
		save_snapshot(t);
		break;
	case TUI_ACT_WINDOW:
		toggle_window(t);
		break;
	case TUI_ACT_THEME:
		next_theme(t);
		break;
	case TUI_ACT_REDRAW:
		clearok(curscr, TRUE); /* e.g. after the command wrote over the screen */
		break;
	default:
		break;
	}
	return true;
}

/* Every key waiting; false when one says quit. */
static bool read_keys(struct tui *t)
{
	int key;

	while ((key = getch()) != ERR) {
		enum tui_action a;

		if (key == KEY_MOUSE) {
			MEVENT ev;

			if (getmouse(&ev) != OK)
				continue;
			a = tui_screen_click(&t->screen, ev.y, ev.x, ev.bstate & BUTTON4_PRESSED,
					     ev.bstate & BUTTON5_PRESSED);
		} else {
			a = tui_screen_key(&t->screen, key);
		}
		if (!act(t, a))
			return false;
		/* The next key may act on the rows this one changed (1 then 3: the callers of the
		 * function selected in the Top view). */
		tui_screen_rebuild(&t->screen);
	}
	return true;
}

/* --- the loop --------------------------------------------------------------------------------- */

static int wait_ms(const struct tui *t, uint64_t now)
{
	uint64_t until = UINT64_MAX;

	if (t->session && !t->screen.ended) {
		until = t->next_refresh;
		if (t->o->duration > 0 && t->start_ns + (uint64_t)llround(t->o->duration * 1e9) < until)
			until = t->start_ns + (uint64_t)llround(t->o->duration * 1e9);
	}
	if (t->screen.message[0] && t->screen.message_ns + MESSAGE_NS < until)
		until = t->screen.message_ns + MESSAGE_NS;
	if (until == UINT64_MAX)
		return -1;
	return until <= now ? 0 : (int)((until - now + 999999) / 1000000);
}

/* Signals and the end of the target; false when proftop must quit. */
static bool session_tick(struct tui *t)
{
	unsigned events = session_events(t->session);
	uint64_t now = util_now_ns();

	if (events & SESSION_QUIT)
		return false;
	if (events & SESSION_SAVE)
		save_snapshot(t);
	if (t->screen.ended)
		return true;
	if (events & SESSION_ENDED)
		end_profiling(t, false);
	else if (t->o->duration > 0 && now - t->start_ns >= (uint64_t)llround(t->o->duration * 1e9))
		end_profiling(t, true);
	else if (now >= t->next_refresh) {
		refresh_snapshot(t);
		t->next_refresh = now + t->refresh_ns;
	}
	return true;
}

static void loop(struct tui *t)
{
	struct pollfd fds[3] = {
		{ .fd = fileno(tty_in ? tty_in : stdin), .events = POLLIN },
		{ .fd = winch_pipe[0], .events = POLLIN },
		{ .fd = t->session ? session_fd(t->session) : t->quit_fd, .events = POLLIN },
	};

	for (;;) {
		uint64_t now = util_now_ns();
		char drain[64];

		if (t->screen.message[0] && now >= t->screen.message_ns + MESSAGE_NS)
			t->screen.message[0] = 0;
		tui_screen_rebuild(&t->screen);
		tui_draw(&t->screen);
		if (poll(fds, 3, wait_ms(t, now)) < 0 && errno != EINTR)
			break;
		if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break; /* the terminal is gone */
		while (fds[1].fd >= 0 && read(fds[1].fd, drain, sizeof(drain)) > 0)
			;
		if (t->session && !session_tick(t))
			break;
		if (!t->session && (fds[2].revents & POLLIN))
			break; /* SIGINT, SIGTERM or SIGHUP while browsing */
		if (!read_keys(t))
			break;
	}
}

static int start(struct tui *t, const struct tui_options *o, const char *target)
{
	struct theme theme;
	char *complaint;

	memset(t, 0, sizeof(*t));
	t->o = o;
	t->quit_fd = -1;
	tui_screen_init(&t->screen, target);
	first_theme(t, &theme, &complaint);
	if (open_terminal(t) < 0) {
		free(complaint);
		tui_screen_free(&t->screen);
		return -1;
	}
	apply_theme(t, &theme);
	if (complaint)
		tui_screen_message(&t->screen, true, "%s", complaint);
	free(complaint);
	t->start_ns = util_now_ns();
	t->refresh_ns = (uint64_t)llround((o->refresh < TUI_MIN_REFRESH ? TUI_MIN_REFRESH : o->refresh) *
					  1e9);
	return 0;
}

static void finish(struct tui *t)
{
	restore_terminal();
	tui_screen_free(&t->screen);
	theme_names_free(t->themes, t->nthemes);
}

int tui_run(struct session *session, const struct tui_options *o)
{
	char *target = session_describe(session);
	struct tui t;
	int status;

	if (start(&t, o, target) < 0) {
		free(target);
		return -1;
	}
	free(target);
	t.session = session;
	if (!session_launched(session))
		snprintf(t.screen.state, sizeof(t.screen.state), "attached");
	refresh_snapshot(&t);
	t.next_refresh = t.start_ns + t.refresh_ns;
	loop(&t);
	/* The terminal first: ending the command may take the grace period. */
	finish(&t);
	session_stop(session);
	status = session_exit_code(session);
	return status;
}

int tui_browse(struct snapshot *snapshot, const char *title, const struct tui_options *o)
{
	struct signalfd_siginfo info;
	sigset_t quit, old;
	struct tui t;

	if (start(&t, o, title) < 0)
		return -1;
	sigemptyset(&quit);
	sigaddset(&quit, SIGINT);
	sigaddset(&quit, SIGTERM);
	sigaddset(&quit, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &quit, &old);
	t.quit_fd = signalfd(-1, &quit, SFD_CLOEXEC | SFD_NONBLOCK);
	t.screen.ended = true;
	snprintf(t.screen.state, sizeof(t.screen.state), "saved profile");
	tui_screen_set_snapshot(&t.screen, snapshot_ref(snapshot));
	loop(&t);
	finish(&t);
	/* The signal that ended the loop was the request; it must not kill proftop once unblocked. */
	while (t.quit_fd >= 0 && read(t.quit_fd, &info, sizeof(info)) == (ssize_t)sizeof(info))
		;
	if (t.quit_fd >= 0)
		close(t.quit_fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}
