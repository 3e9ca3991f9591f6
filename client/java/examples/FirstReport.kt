// The first report from Kotlin, as docs/sdk.md ("Java / Kotlin") shows it: compiled with
// kotlinc -Xjsr305=strict (the SDK's nullability as Kotlin types) and run against a real
// server by CTest kotlin_sample.
import java.io.File
import org.deniable.ReportResult
import org.deniable.Reporter

fun main() {
    // Development mode, as in Java. On Android: Reporter.builder(target).caFile(...)
    // .bearerToken(...).storeDirectory(context.filesDir).build(), off the main thread.
    Reporter.local(File("dev-device-kt")).use { reporter ->
        val result = reporter.report("first_metric", true, mapOf("screen" to "home"))
        val id: ByteArray? = result.reportId() // null for ALREADY_REPORTED
        println("$result (${id?.size ?: 0} bytes)")
        val again = reporter.report("first_metric", false)
        check(again.outcome() == ReportResult.Outcome.ALREADY_REPORTED) { "$again" }
        println(again) // ... already reported this period; nothing sent
        reporter.flush(10_000)
        println(reporter.stats())
    }
}
